package admission

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/scheduling"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/scheduler"
)

// loopWorld is preemptingState holding a 4-GPU low-priority workload
// (admitted and written), with a preemptor, one that waits behind it and
// one that can never fit pending: the API objects and the state.
func loopWorld(now time.Time) (*scheduling.State, []*musterv1beta1.Workload) {
	state := preemptingState()
	low := gpuWorkload("low", 0, "4")
	adm := &core.Admission{ClusterQueue: "cq", PodSets: []core.PodSetAssignment{{
		Name: "main", Count: 1, Flavors: map[string]string{"nvidia.com/gpu": "a100"}, Usage: core.Requests{"nvidia.com/gpu": 4}}}}
	low.Status.Admission = scheduling.FromAdmission(adm)
	victim := scheduling.ToWorkload(low, nil)
	victim.Admission = adm
	_ = state.Cache.Assume(victim)
	objs := []*musterv1beta1.Workload{low}
	for _, w := range []*musterv1beta1.Workload{gpuWorkload("high", 10, "4"), gpuWorkload("mid", 5, "1"), gpuWorkload("huge", 20, "9")} {
		state.ApplyWorkload(w, nil, now)
		objs = append(objs, w)
	}
	return state, objs
}

// loopOutcome is what a cycle left behind: pending heads, workloads
// holding quota or evicting, and the reasons, per workload.
type loopOutcome struct {
	heads, holding, evicting []string
	reasons                  map[string]core.PendingKind
}

func outcomeOf(state *scheduling.State, reasons map[string]core.PendingKind) loopOutcome {
	var o loopOutcome
	for _, w := range heads(state)["cq"] {
		o.heads = append(o.heads, w.Key)
	}
	for _, w := range state.Cache.Admitted("cq", 100) {
		o.holding = append(o.holding, w.Key)
		if w.Evicting {
			o.evicting = append(o.evicting, w.Key)
		}
	}
	slices.Sort(o.heads)
	slices.Sort(o.holding)
	slices.Sort(o.evicting)
	o.reasons = reasons
	return o
}

// TestSchedulerLoopIsTheCoresLoop: the manager's scheduler and the loop the
// simulator runs (scheduler.Schedule, apply, Tracker.Settle) take the same
// inputs to the same decisions and leave the same queues behind, cycle
// after cycle: a preemptor evicts its victim and is parked until it
// leaves; the workload behind it waits; the one that can never fit is
// parked.
func TestSchedulerLoopIsTheCoresLoop(t *testing.T) {
	now := time.Now()
	clk := clocktesting.NewFakeClock(now)

	managed, objs := loopWorld(now)
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(objs[0], objs[1], objs[2], objs[3]).
		WithStatusSubresource(objs[0], objs[1], objs[2], objs[3]).Build()
	s := newScheduler(c, c, managed, events.NewFakeRecorder(100), clk, 50)

	simulated, _ := loopWorld(now)
	for cycle := range 3 {
		s.cycle(context.Background())
		s.drain()
		s.reasons.mu.Lock()
		got := map[string]core.PendingKind{}
		for k, p := range s.reasons.latest {
			got[k] = p.Kind
		}
		s.reasons.mu.Unlock()

		want := coreCycle(simulated, clk.Now())
		if a, b := outcomeOf(managed, got), outcomeOf(simulated, want); !equalOutcomes(a, b) {
			t.Fatalf("cycle %d: the scheduler left %+v, the core's loop %+v", cycle, a, b)
		}
		if got["ns/high"] != core.Preempting || slices.Contains(outcomeOf(managed, nil).heads, "ns/high") {
			t.Errorf("cycle %d: the preemptor's reason is %d, or it was not parked until its victim leaves", cycle, got["ns/high"])
		}
		clk.Step(time.Second)
	}
	if got := outcomeOf(managed, nil); !slices.Equal(got.evicting, []string{"ns/low"}) {
		t.Errorf("evicting %v, want the victim", got.evicting)
	}
}

// coreCycle is the simulator's loop on a state: the decisions applied as
// test/sim applies them (evictions marked, admissions assumed), then
// settled; it returns each pending workload's reason.
func coreCycle(state *scheduling.State, now time.Time) map[string]core.PendingKind {
	state.Queues.UnparkDue(now)
	hs, seq := state.Queues.Heads()
	snap := state.Snapshot()
	snap.SetNow(now)
	reasons := map[string]core.PendingKind{}
	for _, d := range scheduler.Schedule(snap, hs) {
		switch d.Kind() {
		case scheduler.Evict:
			state.Cache.MarkEvicting(d.Workload.Key)
		case scheduler.Preempt:
			for _, v := range d.Victims {
				state.Cache.MarkEvicting(v.Workload.Key)
			}
			reasons[d.Workload.Key] = d.Pending.Kind
		case scheduler.Admit:
			w := *d.Workload
			w.Admission = d.Admission
			state.Queues.Delete(w.Key)
			_ = state.Cache.Assume(&w)
		case scheduler.Wait:
			reasons[d.Workload.Key] = d.Pending.Kind
		}
		state.Settle(&d, seq, now)
	}
	return reasons
}

func equalOutcomes(a, b loopOutcome) bool {
	if !slices.Equal(a.heads, b.heads) || !slices.Equal(a.holding, b.holding) || !slices.Equal(a.evicting, b.evicting) {
		return false
	}
	for k, v := range b.reasons {
		if a.reasons[k] != v {
			return false
		}
	}
	return true
}
