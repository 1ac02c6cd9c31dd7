package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/queue"
)

// Room held for a workload that needs preemption but has no victims yet.
// Each case failed before the hold existed.

// holdQueue is a queue of 6 GPUs whose workloads preempt lower-priority
// ones of their own, outside any cohort.
func holdQueue() *testCache {
	cq := coretest.GPUQueue("q", coretest.GPUs("a100", 6))
	cq.Preemption = core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, ReclaimWithinCohort: core.PreemptAny}
	return cacheWith([]*core.ClusterQueue{cq}, "a100")
}

// A workload that needs preemption but has no victims (what is in its way
// has its own priority, and may run for days) holds no room when its queue
// can always reclaim what it lends: lower-priority workloads may use the
// free quota meanwhile. When it cannot always reclaim (Kueue's rule), the
// room is held and the waiter is not parked, so it holds it every cycle.
func TestRoomHeldForAPreemptorWithoutVictimsOnlyIfUnreclaimable(t *testing.T) {
	for reclaim, wantSmall := range map[core.PreemptionPolicy]bool{core.PreemptAny: true, core.PreemptLowerPriority: false} {
		c := holdQueue()
		cq := coretest.GPUQueue("q", coretest.GPUs("a100", 6))
		cq.Preemption = core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, ReclaimWithinCohort: reclaim}
		c.UpsertClusterQueue(cq)
		c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("running", 10, 0, 1, 4), "q", "a100"))
		ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"q": {coretest.GPUWorkload("waiter", 10, 1, 1, 4), coretest.GPUWorkload("small", 0, 2, 1, 2)}})
		if got := slices.Contains(names(ds, true), "small"); got != wantSmall {
			t.Errorf("reclaim %v: small admitted = %v, want %v", reclaim, got, wantSmall)
		}
		if !wantSmall && ds[0].Park {
			t.Errorf("reclaim %v: the waiter holding room was parked", reclaim)
		}
	}
}

// Without any preemption nothing is held: lower-priority workloads may pass
// (BestEffortFIFO), as in Kueue.
func TestNothingHeldWithoutPreemption(t *testing.T) {
	cq := coretest.GPUQueue("q", coretest.GPUs("a100", 6))
	cq.Preemption = core.Preemption{ReclaimWithinCohort: core.PreemptAny}
	c := cacheWith([]*core.ClusterQueue{cq}, "a100")
	c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("running", 10, 0, 1, 4), "q", "a100"))
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"q": {coretest.GPUWorkload("big", 10, 1, 1, 4), coretest.GPUWorkload("small", 0, 2, 1, 2)}})
	if got := names(ds, true); !slices.Equal(got, []string{"small"}) {
		t.Errorf("admitted %v, want [small]", got)
	}
}

// A pending workload that goes away (deleted, deactivated) gives those
// parked behind it another chance at once.
func TestForgottenWorkloadUnparksItsQueue(t *testing.T) {
	q := queue.NewQueues()
	q.UpsertLocalQueue("ns", "lq", "cq")
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	holder, behind := coretest.GPUWorkload("holder", 10, 0, 1, 4), coretest.GPUWorkload("behind", 0, 1, 1, 2)
	q.AddOrUpdate(holder)
	q.AddOrUpdate(behind)
	q.Park(behind, seqOf(q))
	q.Forget(holder.Key)
	if got := headNames(q, "cq"); !slices.Equal(got, []string{"behind"}) {
		t.Errorf("heads %v, want [behind]", got)
	}
}

// Two preemptors short of the same flavor-resource in one cohort: the
// second waits a cycle instead of picking further victims for room the
// first one's victims may free (Kueue skips preemptors whose targets
// overlap).
func TestOnePreemptorTakesBackPerCohortAndResourcePerCycle(t *testing.T) {
	mk := func(name string, n int64) *core.ClusterQueue {
		cq := inCohort(coretest.GPUQueue(name, coretest.GPUs("a100", n)), "c")
		cq.Preemption = core.Preemption{ReclaimWithinCohort: core.PreemptAny}
		return cq
	}
	c := cacheWith([]*core.ClusterQueue{mk("a", 4), mk("b", 4), mk("borrower", 0)}, "a100")
	for i, name := range []string{"x1", "x2"} {
		c.AddOrUpdateWorkload(at(coretest.Admitted(coretest.GPUWorkload(name, 0, i, 1, 4), "borrower", "a100"), i))
	}
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"a": {coretest.GPUWorkload("wa", 0, 10, 1, 4)}, "b": {coretest.GPUWorkload("wb", 0, 11, 1, 4)}})
	victims := 0
	for _, d := range ds {
		victims += len(d.Victims)
	}
	if victims != 1 {
		t.Errorf("%d victims in one cycle, want 1", victims)
	}
}

// With a preemption delay a workload that fits only by preempting holds
// its room for that long first; if enough frees meanwhile, nobody is
// evicted. Once the delay has passed it preempts.
func TestPreemptionDelay(t *testing.T) {
	c := holdQueue()
	c.cfg.PreemptionDelay = 2 * time.Second
	c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("low", 0, 0, 1, 4), "q", "a100"))
	high := coretest.GPUWorkload("high", 10, 1, 1, 4)
	d := decideAt(c, coretest.Epoch, map[string][]*core.Workload{"q": {high, coretest.GPUWorkload("small", 0, 2, 1, 2)}})
	if len(d[0].Victims) != 0 || !d[0].NeedsPreemption || d[0].RetryAfter != 2*time.Second || d[0].Park {
		t.Fatalf("first attempt: %+v", d[0])
	}
	if d[1].Admission != nil {
		t.Error("a lower-priority workload took the room held for the preemptor")
	}
	high.NeedsPreemptionSince = coretest.Epoch
	if d := decideAt(c, coretest.Epoch.Add(time.Second), map[string][]*core.Workload{"q": {high}}); len(d[0].Victims) != 0 || d[0].RetryAfter != time.Second {
		t.Fatalf("within the delay: %+v", d[0])
	}
	if d := decideAt(c, coretest.Epoch.Add(2*time.Second), map[string][]*core.Workload{"q": {high}}); len(d[0].Victims) != 1 {
		t.Fatalf("after the delay it preempts: %+v", d[0])
	}
}

// The baseline mix's eviction pattern: lower-priority workloads fill the
// queue, and a higher-priority one that needs all of it arrives just
// after. It evicts none of them if they finish within the preemption delay
// (their quota released), and is admitted into the freed room; only those
// still running when the delay ends are its victims.
func TestPreemptorBehindJustAdmittedWorkloadsWaitsForThemToFinish(t *testing.T) {
	c := holdQueue()
	c.cfg.PreemptionDelay = 2 * time.Second
	for i := range 6 {
		c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload(fmt.Sprintf("small%d", i), 0, i, 1, 1), "q", "a100"))
	}
	large := coretest.GPUWorkload("large", 10, 10, 1, 6)
	if d := decideAt(c, coretest.Epoch, map[string][]*core.Workload{"q": {large}}); len(d[0].Victims) != 0 || !d[0].NeedsPreemption {
		t.Fatalf("on arrival: %+v", d[0])
	}
	large.NeedsPreemptionSince = coretest.Epoch
	for i := range 4 { // four finish within the delay
		c.DeleteWorkload(fmt.Sprintf("ns/small%d", i))
	}
	d := decideAt(c, coretest.Epoch.Add(2*time.Second), map[string][]*core.Workload{"q": {large}})
	if got := len(d[0].Victims); got != 2 {
		t.Fatalf("after the delay: %d victims, want the 2 still running: %+v", got, d[0])
	}
	for i := 4; i < 6; i++ {
		c.DeleteWorkload(fmt.Sprintf("ns/small%d", i))
	}
	if d := decideAt(c, coretest.Epoch.Add(2*time.Second), map[string][]*core.Workload{"q": {large}}); d[0].Admission == nil || len(d[0].Victims) != 0 {
		t.Fatalf("all finished within the delay: %+v, want admitted without victims", d[0])
	}
}

// The large-scale mix's eviction pattern, across a cohort: a queue's
// lower-priority workloads, admitted first, borrow all of another queue's
// quota; that queue's own higher-priority workload arrives just after and
// takes back what it lent. As in its own queue, it evicts none of the
// borrowers that finish within the preemption delay, and only the most
// recently admitted of those still running when it ends (reclamation).
func TestReclaimerBehindJustAdmittedBorrowersWaitsForThemToFinish(t *testing.T) {
	mk := func(name string, n int64) *core.ClusterQueue {
		cq := inCohort(coretest.GPUQueue(name, coretest.GPUs("a100", n)), "c")
		cq.Preemption = core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, ReclaimWithinCohort: core.PreemptAny}
		return cq
	}
	c := cacheWith([]*core.ClusterQueue{mk("lender", 4), mk("borrower", 0)}, "a100")
	c.cfg.PreemptionDelay = 2 * time.Second
	for i := range 4 {
		c.AddOrUpdateWorkload(at(coretest.Admitted(coretest.GPUWorkload(fmt.Sprintf("small%d", i), 0, i, 1, 1), "borrower", "a100"), i))
	}
	large := coretest.GPUWorkload("large", 10, 10, 1, 4)
	if d := decideAt(c, coretest.Epoch, map[string][]*core.Workload{"lender": {large}}); len(d[0].Victims) != 0 || !d[0].NeedsPreemption {
		t.Fatalf("on arrival: %+v", d[0])
	}
	large.NeedsPreemptionSince = coretest.Epoch
	c.DeleteWorkload("ns/small1") // two finish within the delay
	c.DeleteWorkload("ns/small3")
	d := decideAt(c, coretest.Epoch.Add(2*time.Second), map[string][]*core.Workload{"lender": {large}})
	var victims []string
	for _, v := range d[0].Victims {
		if v.Reason != InCohortReclamation {
			t.Errorf("victim %s: reason %s, want %s", v.Workload.Name, v.Reason, InCohortReclamation)
		}
		victims = append(victims, v.Workload.Name)
	}
	if !slices.Equal(victims, []string{"small2", "small0"}) {
		t.Fatalf("after the delay: victims %v, want the two still running, the latest admitted first", victims)
	}
	c.DeleteWorkload("ns/small0")
	c.DeleteWorkload("ns/small2")
	if d := decideAt(c, coretest.Epoch.Add(2*time.Second), map[string][]*core.Workload{"lender": {large}}); d[0].Admission == nil || len(d[0].Victims) != 0 {
		t.Fatalf("all finished within the delay: %+v, want admitted without victims", d[0])
	}
}

// decideAt runs a cycle over heads at now.
func decideAt(c *testCache, now time.Time, heads map[string][]*core.Workload) []Decision {
	s := c.Snapshot()
	s.SetNow(now)
	return Schedule(s, heads)
}

// The queues remember when a workload first needed preemption, until it
// changes or leaves.
func TestQueuesRememberWhenPreemptionWasNeeded(t *testing.T) {
	q := queue.NewQueues()
	q.UpsertLocalQueue("ns", "lq", "cq")
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	w := coretest.GPUWorkload("w", 0, 0, 1, 4)
	q.AddOrUpdate(w)
	q.NeedsPreemption(w.Key, coretest.Epoch)
	q.NeedsPreemption(w.Key, coretest.Epoch.Add(time.Minute)) // the first time counts
	if got := headsOf(q)["cq"][0].NeedsPreemptionSince; !got.Equal(coretest.Epoch) {
		t.Errorf("since %s, want %s", got, coretest.Epoch)
	}
	q.NoLongerNeedsPreemption(w.Key) // it waited behind another meanwhile
	if got := headsOf(q)["cq"][0].NeedsPreemptionSince; !got.IsZero() {
		t.Errorf("a need that lapsed starts over, got %s", got)
	}
	q.NeedsPreemption(w.Key, coretest.Epoch)
	shrunk := coretest.GPUWorkload("w", 0, 0, 1, 2)
	q.AddOrUpdate(shrunk)
	if got := headsOf(q)["cq"][0].NeedsPreemptionSince; !got.IsZero() {
		t.Errorf("a changed workload starts over, got %s", got)
	}
}
