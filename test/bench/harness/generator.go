package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	listOne    = metav1.ListOptions{Limit: 1}
)

// createQueues creates the topology's nodes and Topology if there is one,
// the flavor, and per ClusterQueue a namespace of the same name holding a
// LocalQueue of the same name.
func createQueues(ctx context.Context, api *APIServer, t Target, plan Plan) error {
	if plan.Topology != nil {
		if err := createTopology(ctx, api, t, plan.Topology, plan.TopologyAware); err != nil {
			return err
		}
	}
	if err := create(ctx, api, t.Resource("ResourceFlavor"), t.ResourceFlavor(plan)); err != nil {
		return err
	}
	if plan.AdmissionCheck != nil {
		if err := createActiveCheck(ctx, api, t); err != nil {
			return err
		}
	}
	return forEach(len(plan.Queues), 8, func(i int) error {
		q := plan.Queues[i]
		cq := t.ClusterQueue(q, plan.Flavor)
		if plan.AdmissionCheck != nil {
			cq = withCheck(cq)
		}
		return errors.Join(
			createNamespace(ctx, api, q.Name),
			create(ctx, api, t.Resource("ClusterQueue"), cq),
			create(ctx, api, t.Resource("LocalQueue"), t.LocalQueue(q.Name, q.Name, q.Name)),
		)
	})
}

// waitQueuesActive waits until the target reports every ClusterQueue
// Active: its caches hold the whole setup and it is scheduling.
func waitQueuesActive(ctx context.Context, api *APIServer, t Target, n int, exited <-chan struct{}) error {
	deadline := time.After(2 * time.Minute)
	for {
		list, err := api.Dynamic.Resource(t.Resource("ClusterQueue")).List(ctx, metav1.ListOptions{})
		active := 0
		if err == nil {
			for _, cq := range list.Items {
				if isConditionTrue(&cq, "Active") {
					active++
				}
			}
		}
		if active == n {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited before its ClusterQueues became active", t.Name)
		case <-deadline:
			return fmt.Errorf("%s: %d of %d ClusterQueues active after 2 minutes", t.Name, active, n)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func isConditionTrue(u *unstructured.Unstructured, condType string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		var cond metav1.Condition
		if m, ok := c.(map[string]any); ok && runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond) == nil {
			if cond.Type == condType {
				return cond.Status == metav1.ConditionTrue
			}
		}
	}
	return false
}

// generate runs one creation loop per workload set per ClusterQueue. Round
// i of a loop starts at start + i*interval whatever the API latency, so
// both systems get the same offered load. It returns when all are created.
// It tells rec, and the placement check if there is one, what it creates.
func generate(ctx context.Context, api *APIServer, t Target, plan Plan, rec *Recorder, placements *Placements) error {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	gvr := t.Resource("Workload")
	for _, q := range plan.Queues {
		for si, set := range q.Sets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				interval := time.Duration(set.CreationIntervalMs) * time.Millisecond
				for i := range set.Count {
					if !sleepUntil(ctx, start.Add(time.Duration(i)*interval)) {
						return
					}
					for _, wt := range set.Workloads {
						name := fmt.Sprintf("%s-%d-%d", wt.ClassName, si, i)
						rec.Created(q.Name+"/"+name, wt.ClassName, milliCPU(wt), time.Now())
						placements.Expect(q.Name+"/"+name, wt)
						if err := create(ctx, api, gvr, t.Workload(q.Name, name, q.Name, wt)); err != nil {
							select {
							case errs <- err:
							default:
							}
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	select {
	case err := <-errs:
		return fmt.Errorf("creating workloads: %w", err)
	default:
		return ctx.Err()
	}
}

func milliCPU(wt WorkloadTemplate) int64 {
	return wt.Request.MilliValue() * int64(max(wt.PodCount, 1))
}

// create creates an object, retrying transient errors; AlreadyExists is
// success, so a retried create that had gone through is not an error.
func create(ctx context.Context, api *APIServer, gvr schema.GroupVersionResource, u *unstructured.Unstructured) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		_, err = api.Dynamic.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || meta.IsNoMatchError(err) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	return fmt.Errorf("creating %s %s/%s: %w", gvr.Resource, u.GetNamespace(), u.GetName(), err)
}

func sleepUntil(ctx context.Context, at time.Time) bool {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// forEach runs f(0..n-1) with at most par at once and joins the errors.
func forEach(n, par int, f func(i int) error) error {
	sem := make(chan struct{}, par)
	var mu sync.Mutex
	var all []error
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(i); err != nil {
				mu.Lock()
				all = append(all, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(all...)
}
