package harness

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// createActiveCheck creates the mix's AdmissionCheck and marks it Active,
// as its controller would.
func createActiveCheck(ctx context.Context, api *APIServer, t Target) error {
	gvr := t.Resource("AdmissionCheck")
	if err := create(ctx, api, gvr, t.AdmissionCheck()); err != nil {
		return err
	}
	ac, err := api.Dynamic.Resource(gvr).Get(ctx, AdmissionCheckName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cond := map[string]any{"type": "Active", "status": "True", "reason": "Active", "message": "answered by the benchmark",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
	_ = unstructured.SetNestedSlice(ac.Object, []any{cond}, "status", "conditions")
	_, err = api.Dynamic.Resource(gvr).UpdateStatus(ctx, ac, metav1.UpdateOptions{})
	return err
}

// Checker answers the mix's admission check: it says Ready for a
// workload's reservation a random delay after it sees it Pending, as an
// external check controller (a quota approval, an autoscaler) would. Its
// writes are the harness's, not the system's.
type Checker struct {
	client   dynamic.NamespaceableResourceInterface
	informer cache.SharedIndexInformer
	min, max time.Duration

	mu sync.Mutex
	// answering holds the workloads whose reservation has an answer on its
	// way; a workload that loses its reservation is answered anew.
	answering map[string]bool
	writes    int
}

// NewChecker watches the target's Workloads that match selector.
func NewChecker(dyn dynamic.Interface, t Target, cfg *AdmissionCheckConfig, selector string) *Checker {
	c := &Checker{
		client: dyn.Resource(t.Resource("Workload")), informer: workloadInformer(dyn, t, selector),
		min: time.Duration(cfg.MinDelayMs) * time.Millisecond, max: time.Duration(cfg.MaxDelayMs) * time.Millisecond,
		answering: map[string]bool{},
	}
	_, _ = c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { c.observe(o) },
		UpdateFunc: func(_, o any) { c.observe(o) },
	})
	return c
}

// Start runs the watch until ctx ends.
func (c *Checker) Start(ctx context.Context) error {
	go c.informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced) {
		return ctx.Err()
	}
	return nil
}

// Writes is how many status writes the checker made.
func (c *Checker) Writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

func (c *Checker) observe(o any) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	key := u.GetNamespace() + "/" + u.GetName()
	reserved := pendingCheck(u)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !reserved {
		if _, has, _ := unstructured.NestedMap(u.Object, "status", "admission"); !has {
			delete(c.answering, key)
		}
		return
	}
	if c.answering[key] {
		return
	}
	c.answering[key] = true
	delay := c.min
	if c.max > c.min {
		delay += rand.N(c.max - c.min) //nolint:gosec // a benchmark's spread
	}
	ns, name := u.GetNamespace(), u.GetName()
	time.AfterFunc(delay, func() { c.answer(ns, name) })
}

// pendingCheck reports whether a workload holds a reservation whose check
// is Pending.
func pendingCheck(u *unstructured.Unstructured) bool {
	if _, has, _ := unstructured.NestedMap(u.Object, "status", "admission"); !has {
		return false
	}
	return checkState(u) == "Pending"
}

func checkState(u *unstructured.Unstructured) string {
	checks, _, _ := unstructured.NestedSlice(u.Object, "status", "admissionChecks")
	for _, ch := range checks {
		if m, ok := ch.(map[string]any); ok && m["name"] == AdmissionCheckName {
			s, _ := m["state"].(string)
			return s
		}
	}
	return ""
}

// answer writes Ready on the workload's check, on its current version.
func (c *Checker) answer(ns, name string) {
	ctx := context.Background()
	for range 5 {
		u, err := c.client.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || !pendingCheck(u) {
			return
		}
		checks, _, _ := unstructured.NestedSlice(u.Object, "status", "admissionChecks")
		for i, ch := range checks {
			if m, ok := ch.(map[string]any); ok && m["name"] == AdmissionCheckName {
				m["state"], m["message"] = "Ready", "answered by the benchmark"
				m["lastTransitionTime"] = time.Now().UTC().Format(time.RFC3339)
				checks[i] = m
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, checks, "status", "admissionChecks")
		_, err = c.client.Namespace(ns).UpdateStatus(ctx, u, metav1.UpdateOptions{})
		if err == nil {
			c.mu.Lock()
			c.writes++
			c.mu.Unlock()
			return
		}
		if !apierrors.IsConflict(err) {
			return
		}
	}
}
