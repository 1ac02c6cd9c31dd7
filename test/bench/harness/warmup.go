package harness

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// warmUpWorkloads is how many Workloads warmUpWatchCache writes and
// deletes: 7,000 events.
const warmUpWorkloads = 3500

// warmUpNamespace holds the warm-up's Workloads; no LocalQueue is in it.
const warmUpNamespace = "bench-warm-up"

// warmUpWatchCache gives a run's API server the Workload watch cache of
// one that has served a load before, ahead of the watches the target and
// the harness open. The API server sizes a new watcher's buffer to about a
// second of the events its cache holds — its capacity over the cache's
// 75 s window, 10 to 100 events for a watch no index serves — and a fresh
// API server's cache holds 100, so every watch opened at a run's start
// had 10: in a creation burst the dispatcher, finding a buffer full, closed
// the watch, and its client saw the changes it missed only when it had
// watched again (the kubelet saw admissions seconds late, and what it
// had therefore not finished was what the systems preempted). The cache
// doubles whenever it is full of events younger than its window, so 7,000
// events in a few seconds take it from 100 to 12,800: a watcher opened
// then gets 100 events of buffer, as on a cluster's API server that has
// been running. The workloads have no queue and are gone before the
// target starts, so no system sees one.
func warmUpWatchCache(ctx context.Context, api *APIServer, t Target) error {
	if err := createNamespace(ctx, api, warmUpNamespace); err != nil {
		return err
	}
	gvr := t.Resource("Workload")
	wt := WorkloadTemplate{ClassName: "warm-up", Request: resource.MustParse("1m"), PodCount: 1}
	err := forEach(warmUpWorkloads, 16, func(i int) error {
		u := t.Workload(warmUpNamespace, fmt.Sprintf("warm-up-%d", i), "warm-up", wt)
		u.SetLabels(nil) // not a run's workload: the harness's watches select ClassLabel
		return create(ctx, api, gvr, u)
	})
	if err != nil {
		return fmt.Errorf("warming up the watch cache: %w", err)
	}
	res := api.Dynamic.Resource(gvr).Namespace(warmUpNamespace)
	if err := res.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("deleting the warm-up's workloads: %w", err)
	}
	return nil
}
