package visibility

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/queue"
	"github.com/musterhq/muster/internal/core/quota"
)

// BenchmarkPendingWorkloads100k answers the two subresources for a
// ClusterQueue of 100,000 pending workloads over 100 LocalQueues, a page of
// the default 1,000: what the API costs the manager per request (the API
// server's proxying and JSON encoding come on top; the integration test
// measures nothing).
func BenchmarkPendingWorkloads100k(b *testing.B) {
	q := queue.NewQueues()
	q.UpsertClusterQueue("gpu", core.BestEffortFIFO)
	for i := range 100 {
		q.UpsertLocalQueue("team", fmt.Sprintf("lq%d", i), "gpu")
	}
	for i := range 100000 {
		q.AddOrUpdate(pendingWl("team", fmt.Sprintf("lq%d", i%100), fmt.Sprintf("w%d", i), int32(i%7), i))
	}
	src := Source{Queues: q, Synced: func() bool { return true }, Reason: func(string) string { return "insufficient quota" }}
	st := storages(src)
	cq := st["clusterqueues/pendingworkloads"].(*pendingInClusterQueue)
	lq := st["localqueues/pendingworkloads"].(*pendingInLocalQueue)
	ctx := genericapirequest.WithNamespace(context.Background(), "team")
	b.Run("clusterqueue", func(b *testing.B) {
		for b.Loop() {
			if _, err := cq.Get(ctx, "gpu", opts(0, 1000)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("clusterqueue/json", func(b *testing.B) {
		// The page as the API server's JSON serializer writes it.
		for b.Loop() {
			obj, err := cq.Get(ctx, "gpu", opts(0, 1000))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(obj); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("clusterqueue/last-page", func(b *testing.B) {
		for b.Loop() {
			if _, err := cq.Get(ctx, "gpu", opts(99000, 1000)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("localqueue", func(b *testing.B) {
		for b.Loop() {
			if _, err := lq.Get(ctx, "lq42", opts(0, 1000)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkExplanation answers one workload's explanation with 1,000
// ClusterQueues holding 10 admitted workloads each and 10,000 pending in
// the workload's own: the snapshot the search runs on is the cost, once
// per request (a user asking, not a cycle).
func BenchmarkExplanation(b *testing.B) {
	c := quota.NewCache()
	c.UpsertFlavor(&core.Flavor{Name: "a100"})
	src := fixture()
	for i := range 1000 {
		name := fmt.Sprintf("cq%d", i)
		c.UpsertClusterQueue(&core.ClusterQueue{Name: name, NamespaceSelector: allNamespaces{}, Weight: 1000,
			Preemption: core.Preemption{WithinClusterQueue: core.PreemptLowerPriority},
			ResourceGroups: []core.ResourceGroup{{Resources: []string{"nvidia.com/gpu"}, Flavors: []core.FlavorQuotas{{
				Flavor: "a100", Resources: map[string]core.ResourceQuota{"nvidia.com/gpu": {Nominal: 10}}}}}}})
		for j := range 10 {
			w := admittedWl(fmt.Sprintf("%s-%d", name, j), int32(j), 1)
			w.Admission.ClusterQueue = name
			c.AddOrUpdateWorkload(w)
		}
	}
	src.Queues.UpsertClusterQueue("cq0", core.BestEffortFIFO)
	src.Queues.UpsertLocalQueue("team", "lq", "cq0")
	for i := range 10000 {
		w := pendingWl("team", "lq", fmt.Sprintf("w%d", i), int32(i%7), i)
		w.PodSets[0].Count = 2
		src.Queues.AddOrUpdate(w)
	}
	src.Cache = c
	x := storages(src)["workloads/explanation"].(*explanation)
	ctx := genericapirequest.WithNamespace(context.Background(), "team")
	for b.Loop() {
		obj, err := x.Get(ctx, "w9999", nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(obj.(*visibilityv1beta1.WorkloadExplanation).Preemption.Victims) != 2 {
			b.Fatalf("victims %v", obj.(*visibilityv1beta1.WorkloadExplanation).Preemption)
		}
	}
}
