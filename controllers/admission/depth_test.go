package admission

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
)

// backlog is 30 workloads in ns/lq and 3 in ns/other, none of which fits
// the 4-GPU ClusterQueue, with a scheduler over them; hold stops lq.
func backlog(t *testing.T, hold bool) (*Scheduler, client.Client, *clocktesting.FakeClock) {
	t.Helper()
	state := preemptingState()
	other := &musterv1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns"},
		Spec: musterv1beta1.LocalQueueSpec{ClusterQueue: "cq"}}
	state.ApplyLocalQueue(other)
	if hold {
		stop := musterv1beta1.Hold
		state.ApplyLocalQueue(&musterv1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "lq", Namespace: "ns"},
			Spec: musterv1beta1.LocalQueueSpec{ClusterQueue: "cq", StopPolicy: &stop}})
	}
	b := fake.NewClientBuilder().WithScheme(testScheme())
	start := time.Now()
	for i := range 33 {
		wl := gpuWorkload(fmt.Sprintf("w%02d", i), 0, "8")
		wl.CreationTimestamp = metav1.NewTime(start.Add(time.Duration(i) * time.Second))
		if i >= 30 {
			wl.Spec.QueueName = "other"
		}
		b = b.WithObjects(wl).WithStatusSubresource(wl)
		state.ApplyWorkload(wl, nil, start)
	}
	c := b.Build()
	clk := clocktesting.NewFakeClock(start)
	return newScheduler(c, c, state, events.NewFakeRecorder(100), clk, 50), c, clk
}

// written lists the workloads whose Pending reason is in their status.
func written(t *testing.T, c client.Client) []string {
	t.Helper()
	var list musterv1beta1.WorkloadList
	if err := c.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, wl := range list.Items {
		if cond := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved); cond != nil &&
			cond.Reason == musterv1beta1.ReasonPending {
			out = append(out, wl.Name)
		}
	}
	return out
}

// TestReasonsWrittenNearTheHead: of a backlog that does not fit, the first
// describedDepth of the ClusterQueue and of each LocalQueue get their reason
// written; every one keeps it in memory for the visibility API.
func TestReasonsWrittenNearTheHead(t *testing.T) {
	s, c, clk := backlog(t, false)
	s.cycle(context.Background())
	s.drain()
	due := dueReasons(s)
	if want := describedDepth + 3; due != want {
		t.Fatalf("%d reasons due, want %d (the first %d of lq, the 3 of other)", due, want, describedDepth)
	}
	writeDue(t, context.Background(), s.reasons, clk, due)
	got := written(t, c)
	want := []string{"w00", "w01", "w02", "w03", "w04", "w05", "w06", "w07", "w08", "w09", "w30", "w31", "w32"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reasons written to %v, want %v", got, want)
	}
	for i := range 33 {
		key := fmt.Sprintf("ns/w%02d", i)
		if why, ok := s.reasons.reason(key); !ok || why.Kind != core.NoQuota {
			t.Errorf("%s: reason in memory %v, %v; want NoQuota", key, why.Kind, ok)
		}
	}
}

// TestReasonsWrittenWhenTheQueueHolds: a held LocalQueue is configuration
// its users must see, on every workload it holds however deep.
func TestReasonsWrittenWhenTheQueueHolds(t *testing.T) {
	s, _, _ := backlog(t, true)
	s.cycle(context.Background())
	s.drain()
	for i := range 30 {
		key := fmt.Sprintf("ns/w%02d", i)
		if why, _ := s.reasons.reason(key); why.Kind != core.LocalQueueHeld {
			t.Fatalf("%s: reason %v, want LocalQueueHeld", key, why.Kind)
		}
	}
	if due, want := dueReasons(s), 33; due != want {
		t.Errorf("%d reasons due, want %d", due, want)
	}
}

func dueReasons(s *Scheduler) int {
	s.reasons.mu.Lock()
	defer s.reasons.mu.Unlock()
	return len(s.reasons.queued)
}

// TestReasonsPromotedWhenTheWorkloadsAheadLeave: workloads ahead leaving
// unadmitted (deleted) decide nothing, so no cycle runs; the periodic look
// at remembered reasons writes those that moved up, and lets go of the
// reasons of workloads no longer queued.
func TestReasonsPromotedWhenTheWorkloadsAheadLeave(t *testing.T) {
	s, c, clk := backlog(t, false)
	ctx := context.Background()
	s.cycle(ctx)
	s.drain()
	writeDue(t, ctx, s.reasons, clk, dueReasons(s))
	for i := range 3 {
		s.state.Forget(fmt.Sprintf("ns/w%02d", i))
	}
	near := func(key string) (bool, bool) { return s.state.Queues.NearHead(key, describedDepth) }
	s.reasons.promote(near)
	if due := dueReasons(s); due != 3 {
		t.Fatalf("%d reasons due after three ahead left, want 3", due)
	}
	writeDue(t, ctx, s.reasons, clk, 3)
	if got := written(t, c); !slices.Contains(got, "w12") || slices.Contains(got, "w13") {
		t.Errorf("reasons written to %v, want w10–w12 among them and not w13", got)
	}
	if _, kept := s.reasons.reason("ns/w00"); kept {
		t.Error("a forgotten workload's reason is kept")
	}
	s.reasons.remember("ns/gone", core.Pending{Kind: core.NoQuota})
	s.reasons.promote(near)
	if _, kept := s.reasons.reason("ns/gone"); kept {
		t.Error("the reason of a workload no longer queued is kept")
	}
}

// TestReasonWrittenAgainWhenItMovesBackUp: written near the head, changed
// while deep (remembered only), and near again: the new reason is written,
// though the latest in memory already equals it.
func TestReasonWrittenAgainWhenItMovesBackUp(t *testing.T) {
	s, c, clk := backlog(t, false)
	ctx := context.Background()
	r := s.reasons
	first, then := gpusShort("a100", 8, 4), gpusShort("h100", 8, 4) // another reason, not just other amounts
	r.set("ns/w00", first)
	writeDue(t, ctx, r, clk, 1)
	r.remember("ns/w00", then)
	r.set("ns/w00", then)
	if dueReasons(s) != 1 {
		t.Fatal("the reason changed while deep is not written once near again")
	}
	writeDue(t, ctx, r, clk, 1)
	var wl musterv1beta1.Workload
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w00"}, &wl); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved); cond == nil || cond.Message != then.Message() {
		t.Errorf("condition %+v, want %q", cond, then.Message())
	}
}
