package harness

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// admittedWorkload is a Workload the scheduler has admitted, with a runtime
// of 1 ms.
func admittedWorkload(target Target, name string) *unstructured.Unstructured {
	gv := target.Resource("Workload").GroupVersion()
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv.String(), "kind": "Workload",
		"metadata": map[string]any{
			"name": name, "namespace": "ns", "resourceVersion": "1",
			"labels": map[string]any{ClassLabel: "small", RuntimeLabel: "1"},
		},
		"status": map[string]any{
			"admission": map[string]any{"clusterQueue": "cq"},
			"conditions": []any{
				map[string]any{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "", "lastTransitionTime": "2026-12-07T01:02:42Z"},
				map[string]any{"type": "Admitted", "status": "True", "reason": "Admitted", "message": "", "lastTransitionTime": "2026-12-07T01:02:42Z"},
			},
		},
	}}
}

// TestKubeletRetriesAFailedFinish: a finish whose write the API server
// times out (as under a 50k creation burst) is written again later, not
// dropped: a dropped one left its workload admitted and the run waiting
// for it until the run's timeout.
func TestKubeletRetriesAFailedFinish(t *testing.T) {
	target := Muster("", "")
	gvr := target.Resource("Workload")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "WorkloadList"}, admittedWorkload(target, "w"))
	failures := 2
	dyn.PrependReactor("patch", "workloads", func(clienttesting.Action) (bool, runtime.Object, error) {
		if failures > 0 {
			failures--
			return true, nil, apierrors.NewTimeoutError("request did not complete within requested timeout", 1)
		}
		return false, nil, nil
	})
	rec := NewRecorder()
	rec.Created("ns/w", "small", 1, time.Now())
	k := NewKubelet(dyn, target, rec, ClassLabel)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := k.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for {
		u, err := dyn.Resource(gvr).Namespace("ns").Get(ctx, "w", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := viewOf(u); err == nil && meta.IsStatusConditionTrue(v.Conditions, "Finished") {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the workload was never finished after its finish failed twice (retries %d)", k.Retries())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if got := k.Retries(); got != 2 {
		t.Errorf("retries %d, want 2", got)
	}
	if got := k.Writes(); got != 1 {
		t.Errorf("writes %d, want 1", got)
	}
}
