package harness

import (
	"context"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// workerStub plays a worker cluster's queueing system and its jobs, so
// that a run measures the manager's dispatch and not ten more schedulers
// on the same two cores: it admits the copies the manager sends, first
// come first served, up to slots at a time (a ClusterQueue of that quota),
// and finishes a copy the job's runtime after the manager created the job
// there. A copy the manager deletes frees its slot.
type workerStub struct {
	name    string
	slots   int
	runtime time.Duration
	copies  dynamic.NamespaceableResourceInterface

	mu      sync.Mutex
	waiting []string            // copy names, in arrival order
	held    map[string]bool     // admitted and not finished
	known   map[string]struct{} // every copy seen, so none is queued twice
}

var jobsGVR = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}

func startWorkerStubs(ctx context.Context, workers []*APIServer, spec MultiClusterSpec) ([]*workerStub, error) {
	var stubs []*workerStub
	for i, w := range workers {
		s := &workerStub{
			name: "worker" + strconv.Itoa(i+1), slots: spec.WorkerSlots,
			runtime: time.Duration(spec.RuntimeMs) * time.Millisecond,
			copies:  w.Dynamic.Resource(spec.Target.Resource("Workload")),
			held:    map[string]bool{}, known: map[string]struct{}{},
		}
		if err := s.start(ctx, w, spec.Target); err != nil {
			return nil, err
		}
		stubs = append(stubs, s)
	}
	return stubs, nil
}

func (s *workerStub) start(ctx context.Context, w *APIServer, t Target) error {
	factory := dynamicinformer.NewDynamicSharedInformerFactory(w.Dynamic, 0)
	copies := factory.ForResource(t.Resource("Workload")).Informer()
	jobs := factory.ForResource(jobsGVR).Informer()
	for _, inf := range []cache.SharedIndexInformer{copies, jobs} {
		if err := inf.SetTransform(metadataOnly); err != nil {
			return err
		}
	}
	_, err := copies.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.arrived(nameOf(o)) },
		DeleteFunc: func(o any) { s.gone(nameOf(o)) },
	})
	if err != nil {
		return err
	}
	_, err = jobs.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			go s.finishAfter(ctx, prebuiltName(u), s.runtime)
		}
	}})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	go s.admitLoop(ctx)
	return nil
}

// prebuiltName is the copy a job the manager created in a worker runs
// for: Muster's annotation, or Kueue's (annotation or label).
func prebuiltName(u *unstructured.Unstructured) string {
	for _, k := range []string{"muster.dev/prebuilt-workload-name", "kueue.x-k8s.io/prebuilt-workload-name"} {
		if n := u.GetAnnotations()[k]; n != "" {
			return n
		}
		if n := u.GetLabels()[k]; n != "" {
			return n
		}
	}
	return ""
}

// metadataOnly keeps an informer's objects small: 10,000 copies in each
// of ten workers.
func metadataOnly(o any) (any, error) {
	if u, ok := o.(*unstructured.Unstructured); ok {
		u.SetManagedFields(nil)
		delete(u.Object, "spec")
		delete(u.Object, "status")
	}
	return o, nil
}

// arrived queues a new copy.
func (s *workerStub) arrived(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.known[name]; ok {
		return
	}
	s.known[name] = struct{}{}
	s.waiting = append(s.waiting, name)
}

// gone frees a deleted copy's slot.
func (s *workerStub) gone(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, name)
	delete(s.known, name)
	for i, n := range s.waiting {
		if n == name {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			break
		}
	}
}

// next takes the next copy to admit, if a slot is free.
func (s *workerStub) next() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.held) >= s.slots || len(s.waiting) == 0 {
		return "", false
	}
	name := s.waiting[0]
	s.waiting = s.waiting[1:]
	s.held[name] = true
	return name, true
}

func (s *workerStub) release(name string) {
	s.mu.Lock()
	delete(s.held, name)
	s.mu.Unlock()
}

// admitLoop admits waiting copies as slots free.
func (s *workerStub) admitLoop(ctx context.Context) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		for {
			name, ok := s.next()
			if !ok {
				break
			}
			if !s.write(ctx, name, admitted) {
				s.release(name)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// finishAfter finishes a copy once its job has run.
func (s *workerStub) finishAfter(ctx context.Context, name string, d time.Duration) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(d):
	}
	s.write(ctx, name, finished)
	s.release(name)
}

// write sets a copy's status, reporting whether it was there to set.
func (s *workerStub) write(ctx context.Context, name string, set func(*unstructured.Unstructured)) bool {
	for range 5 {
		u, err := s.copies.Namespace(mcNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		set(u)
		_, err = s.copies.Namespace(mcNamespace).UpdateStatus(ctx, u, metav1.UpdateOptions{})
		if err == nil {
			return true
		}
		if !apierrors.IsConflict(err) {
			return false
		}
	}
	return false
}

func admitted(u *unstructured.Unstructured) {
	now := metav1.Now().UTC().Format(time.RFC3339)
	_ = unstructured.SetNestedField(u.Object, map[string]any{
		"clusterQueue": mcQueue,
		"podSetAssignments": []any{map[string]any{
			"name": "main", "count": int64(1),
			"flavors":       map[string]any{"cpu": "default"},
			"resourceUsage": map[string]any{"cpu": "1"},
		}},
	}, "status", "admission")
	setConditions(u, now, condition("QuotaReserved", "QuotaReserved"), condition("Admitted", "Admitted"))
}

func finished(u *unstructured.Unstructured) {
	setConditions(u, metav1.Now().UTC().Format(time.RFC3339), condition("Finished", "Succeeded"))
}

func condition(typ, reason string) map[string]any {
	return map[string]any{"type": typ, "status": "True", "reason": reason, "message": "set by the benchmark's worker"}
}

func setConditions(u *unstructured.Unstructured, now string, conds ...map[string]any) {
	existing, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		c["lastTransitionTime"] = now
		replaced := false
		for i, e := range existing {
			if m, ok := e.(map[string]any); ok && m["type"] == c["type"] {
				existing[i], replaced = c, true
			}
		}
		if !replaced {
			existing = append(existing, c)
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, existing, "status", "conditions")
}

func nameOf(o any) string {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	if u, ok := o.(*unstructured.Unstructured); ok {
		return u.GetName()
	}
	return ""
}
