package admission

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/scheduling"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/test/builder"
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

	state := scheduling.NewState()
	state.ApplyFlavor(quotaOnlyFlavor("a100"))
	state.ApplyClusterQueue(&musterv1beta1.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: "cq"},
		Spec: musterv1beta1.ClusterQueueSpec{NamespaceSelector: &metav1.LabelSelector{}, ResourceGroups: []musterv1beta1.ResourceGroup{{
			CoveredResources: []corev1.ResourceName{"nvidia.com/gpu"},
			Flavors: []musterv1beta1.FlavorQuotas{{Name: "a100", Resources: []musterv1beta1.ResourceQuota{
				{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("4")}}}},
		}}},
	})
	state.ApplyLocalQueue(&musterv1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "lq", Namespace: "ns"},
		Spec: musterv1beta1.LocalQueueSpec{ClusterQueue: "cq"}})
	state.ApplyWorkload(wl, nil, time.Now())

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

func heads(s *scheduling.State) map[string][]*core.Workload { h, _ := s.Queues.Heads(); return h }

// A preemptor whose victim cannot be evicted yet (its admission is still
// being written, or the write conflicts) is not parked: it would wait for a
// release that its own victims will not bring. It tries again and says so.
func TestPreemptorIsRetriedWhenItsVictimCannotBeEvicted(t *testing.T) {
	for name, written := range map[string]bool{"conflicting eviction write": true, "victim admission not written yet": false} {
		t.Run(name, func(t *testing.T) {
			low, high := gpuWorkload("low", 0, "4"), gpuWorkload("high", 10, "4")
			state := preemptingState()
			victim := scheduling.ToWorkload(low, nil)
			victim.Admission = &core.Admission{ClusterQueue: "cq", PodSets: []core.PodSetAssignment{{
				Name: "main", Count: 1, Flavors: map[string]string{"nvidia.com/gpu": "a100"}, Usage: core.Requests{"nvidia.com/gpu": 4}}}}
			if written {
				low.Status.Admission = scheduling.FromAdmission(victim.Admission)
			}
			if err := state.Cache.Assume(victim); err != nil {
				t.Fatal(err)
			}
			state.ApplyWorkload(high, nil, time.Now())
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(low, high).WithStatusSubresource(low, high).
				WithInterceptorFuncs(interceptor.Funcs{
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
						return apierrors.NewConflict(schema.GroupResource{Resource: "workloads"}, obj.GetName(), errors.New("injected"))
					},
				}).Build()
			s := newScheduler(c, c, state, events.NewFakeRecorder(10), clocktesting.NewFakeClock(time.Now()), 50)
			s.cycle(context.Background())
			s.drain()

			if got := heads(state)["cq"]; len(got) != 1 || got[0].Name != "high" {
				t.Errorf("the preemptor was parked: heads %v", got)
			}
			s.reasons.mu.Lock()
			why := s.reasons.latest["ns/high"]
			s.reasons.mu.Unlock()
			msg := why.Message()
			if !strings.Contains(msg, "preemption in progress: could not evict ns/low yet") {
				t.Errorf("pending reason %q", msg)
			}
		})
	}
}

func testScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = musterv1beta1.AddToScheme(scheme)
	return scheme
}

// preemptingState is a 4-GPU ClusterQueue "cq" whose workloads preempt
// lower-priority ones, with LocalQueue ns/lq.
func preemptingState() *scheduling.State {
	state := scheduling.NewState()
	state.ApplyFlavor(quotaOnlyFlavor("a100"))
	state.ApplyClusterQueue(&musterv1beta1.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: "cq"},
		Spec: musterv1beta1.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			Preemption:        &musterv1beta1.ClusterQueuePreemption{WithinClusterQueue: musterv1beta1.PreemptionPolicyLowerPriority},
			ResourceGroups: []musterv1beta1.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{"nvidia.com/gpu"},
				Flavors: []musterv1beta1.FlavorQuotas{{Name: "a100", Resources: []musterv1beta1.ResourceQuota{
					{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("4")}}}},
			}}},
	})
	state.ApplyLocalQueue(&musterv1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "lq", Namespace: "ns"},
		Spec: musterv1beta1.LocalQueueSpec{ClusterQueue: "cq"}})
	return state
}

// gpuWorkload is a Workload of one pod of gpus GPUs in ns/lq.
func gpuWorkload(name string, priority int32, gpus string) *musterv1beta1.Workload {
	return builder.MakeWorkload(name, "ns").Queue("lq").Priority(priority).Request("nvidia.com/gpu", gpus).Created(time.Now()).Obj()
}

// A workload admitted again after an eviction is not ready until the pods
// of this admission are: a PodsReady=True left from the last admission
// would let blockAdmission admit others before it has pods.
func TestReadmissionResetsPodsReady(t *testing.T) {
	wl := gpuWorkload("w", 0, "2")
	wl.Status.Conditions = []metav1.Condition{{Type: musterv1beta1.WorkloadPodsReady, Status: metav1.ConditionTrue,
		Reason: musterv1beta1.ReasonReady, LastTransitionTime: metav1.Now()}}
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(wl).WithStatusSubresource(wl).Build()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(wl), wl); err != nil {
		t.Fatal(err)
	}
	state := preemptingState()
	state.ApplyWorkload(wl, nil, time.Now())
	s := newScheduler(c, c, state, events.NewFakeRecorder(10), clocktesting.NewFakeClock(time.Now()), 50)
	s.cycle(context.Background())
	s.drain()
	var got musterv1beta1.Workload
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(wl), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Admission == nil {
		t.Fatal("not admitted")
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, musterv1beta1.WorkloadPodsReady)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != musterv1beta1.ReasonWaitForStart {
		t.Errorf("PodsReady = %+v, want False/WaitForStart", cond)
	}
}

// requeuingStrategy.timestamp: Creation gives a workload requeued after a
// PodsReady timeout its original place; Eviction (and any other eviction)
// puts it behind those that waited meanwhile.
func TestRequeuingTimestamp(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	requeuedAt := created.Add(time.Hour)
	for _, tc := range []struct {
		byCreation bool
		reason     string
		want       time.Time
	}{
		{false, musterv1beta1.ReasonPodsReadyTimeout, requeuedAt},
		{true, musterv1beta1.ReasonPodsReadyTimeout, created},
		{true, musterv1beta1.ReasonPreempted, requeuedAt},
	} {
		wl := gpuWorkload("w", 0, "1")
		wl.CreationTimestamp = metav1.NewTime(created)
		wl.Status.Conditions = []metav1.Condition{{Type: musterv1beta1.WorkloadRequeued, Status: metav1.ConditionTrue,
			Reason: tc.reason, LastTransitionTime: metav1.NewTime(requeuedAt)}}
		s := scheduling.NewState()
		s.RequeueByCreation = tc.byCreation
		if got := s.PendingWorkload(wl, nil).Created; !got.Equal(tc.want) {
			t.Errorf("byCreation=%v, requeued after %s: ordered from %s, want %s", tc.byCreation, tc.reason, got, tc.want)
		}
	}
}

// A draining queue's workloads are evicted with the reason of the queue
// that drains them, in their condition and in the eviction metric, not a
// generic one.
func TestDrainWritesTheDecisionsReason(t *testing.T) {
	for name, tc := range map[string]struct {
		stopCQ, stopLQ bool
		want, message  string
	}{
		"ClusterQueue drained": {stopCQ: true, want: musterv1beta1.ReasonClusterQueueStopped, message: "ClusterQueue cq is stopped and draining"},
		"LocalQueue drained":   {stopLQ: true, want: musterv1beta1.ReasonLocalQueueStopped, message: "LocalQueue lq is stopped and draining"},
	} {
		t.Run(name, func(t *testing.T) {
			wl := gpuWorkload("w", 0, "2")
			wl.Status.Admission = &musterv1beta1.Admission{ClusterQueue: "cq", PodSetAssignments: []musterv1beta1.PodSetAssignment{{
				Name: "main", Flavors: map[corev1.ResourceName]musterv1beta1.ResourceFlavorReference{"nvidia.com/gpu": "a100"},
				ResourceUsage: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}}}}
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(wl).WithStatusSubresource(wl).Build()
			state := preemptingState()
			drain := musterv1beta1.HoldAndDrain
			if tc.stopCQ {
				var cq musterv1beta1.ClusterQueue
				cq.Name = "cq"
				cq.Spec = musterv1beta1.ClusterQueueSpec{NamespaceSelector: &metav1.LabelSelector{}, StopPolicy: &drain,
					ResourceGroups: []musterv1beta1.ResourceGroup{{CoveredResources: []corev1.ResourceName{"nvidia.com/gpu"},
						Flavors: []musterv1beta1.FlavorQuotas{{Name: "a100", Resources: []musterv1beta1.ResourceQuota{
							{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("4")}}}}}}}
				state.ApplyClusterQueue(&cq)
			}
			if tc.stopLQ {
				state.ApplyLocalQueue(&musterv1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "lq", Namespace: "ns"},
					Spec: musterv1beta1.LocalQueueSpec{ClusterQueue: "cq", StopPolicy: &drain}})
			}
			state.ApplyWorkload(wl, nil, time.Now())
			s := newScheduler(c, c, state, events.NewFakeRecorder(10), clocktesting.NewFakeClock(time.Now()), 50)
			s.cycle(context.Background())
			s.drain()

			var got musterv1beta1.Workload
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(wl), &got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, musterv1beta1.WorkloadEvicted)
			if cond == nil || cond.Reason != tc.want || cond.Message != tc.message {
				t.Errorf("Evicted = %+v, want reason %s, message %q", cond, tc.want, tc.message)
			}
		})
	}
}

// quotaOnlyFlavor is a flavor that admits on quota alone: these tests
// have no nodes.
func quotaOnlyFlavor(name string) *musterv1beta1.ResourceFlavor {
	return builder.MakeResourceFlavor(name).QuotaOnly().Obj()
}
