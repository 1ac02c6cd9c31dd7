package core

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
)

// TestFailedAdmissionWriteIsUndone: the scheduler assumes the admission in
// the cache, the status write fails, and the assumption is forgotten and the
// workload queued again, so no quota leaks.
func TestFailedAdmissionWriteIsUndone(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = musterv1beta1.AddToScheme(scheme)
	wl := &musterv1beta1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", CreationTimestamp: metav1.Now()},
		Spec: musterv1beta1.WorkloadSpec{QueueName: "lq", PodSets: []musterv1beta1.PodSet{{
			Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}},
			}}}},
		}}},
	}
	writes := 0
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(wl).WithStatusSubresource(wl).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				writes++
				return errors.New("injected write failure")
			},
		}).Build()

	state := NewState()
	state.applyFlavor(&musterv1beta1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "a100"}})
	state.applyClusterQueue(&musterv1beta1.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: "cq"},
		Spec: musterv1beta1.ClusterQueueSpec{NamespaceSelector: &metav1.LabelSelector{}, ResourceGroups: []musterv1beta1.ResourceGroup{{
			CoveredResources: []corev1.ResourceName{"nvidia.com/gpu"},
			Flavors: []musterv1beta1.FlavorQuotas{{Name: "a100", Resources: []musterv1beta1.ResourceQuota{
				{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("4")}}}},
		}}},
	})
	state.applyLocalQueue(&musterv1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "lq", Namespace: "ns"},
		Spec: musterv1beta1.LocalQueueSpec{ClusterQueue: "cq"}})
	state.applyWorkload(wl, nil, time.Now())

	s := newScheduler(c, c, state, events.NewFakeRecorder(10), clocktesting.NewFakeClock(wl.CreationTimestamp.Time), 50)
	s.cycle(context.Background())
	s.drain()

	if writes != 1 {
		t.Fatalf("status writes = %d, want 1", writes)
	}
	if state.Cache.HoldsQuota("ns/w") {
		t.Error("the failed admission still holds quota")
	}
	if heads := heads(state)["cq"]; len(heads) != 1 {
		t.Errorf("the workload was not queued again: %v", heads)
	}
}

func heads(s *State) map[string][]*core.Workload { h, _ := s.Queues.Heads(); return h }
