package core

import (
	"testing"
	"time"
)

// TestFairSharingDecidesWithinNominalBeforeBorrowers: queues "a" and "b"
// of nominal 4 each in one cohort; a holds 3, b holds its 4, and the one
// free GPU is a's. Both shares are 0 and b's pending workload is older, so
// the tournament alone would hand it a's GPU by borrowing — which a
// would reclaim at once, and so on every cycle (the loop the simulator
// found, thousands of preemptions with decayed usage, where b's decayed
// share stays lowest). a's workload, within its nominal quota, is decided
// first; b's waits. With decay, the same.
func TestFairSharingDecidesWithinNominalBeforeBorrowers(t *testing.T) {
	for _, decay := range []bool{false, true} {
		a, b := inCohort(gpuQueue("a", gpus("a100", 4)), "pool"), inCohort(gpuQueue("b", gpus("a100", 4)), "pool")
		a.Preemption = Preemption{ReclaimWithinCohort: PreemptAny}
		b.Preemption = Preemption{ReclaimWithinCohort: PreemptAny}
		c := cacheWith([]*ClusterQueue{a, b}, "a100")
		c.UpsertCohort(&Cohort{Name: "pool", Weight: 1000})
		c.SetFairSharing(true)
		if decay {
			c.SetUsageDecay(DecayConfig{HalfLife: time.Hour}, 5*time.Minute)
			c.SampleUsage(epoch) // both at their current usage
		}
		for i, n := range []int64{3, 4} {
			q := []string{"a", "b"}[i]
			held := gpuWl("held-"+q, 0, 0, 1, n)
			held.Queue = q
			c.AddOrUpdateWorkload(admitted(held, q, "a100"))
		}
		s := c.Snapshot()
		s.SetNow(epoch.Add(time.Minute))
		ds := Schedule(s, map[string][]*Workload{"a": {gpuWl("a-new", 0, 20, 1, 1)}, "b": {gpuWl("b-new", 0, 10, 1, 1)}})
		if got := names(ds, true); len(got) != 1 || got[0] != "a-new" {
			t.Errorf("decay %v: admitted %v, want [a-new]", decay, got)
		}
	}
}

// TestDecayedFairSharingDoesNotPreemptWhomItServes: "a" ran the pool's 8
// GPUs for three hours, then "b" took them. By current usage a may take
// GPUs back from b (Kueue's fair-sharing preemption), but the decayed
// tournament serves b first and would hand the freed GPUs back to it, to
// be preempted again: the loop the simulator found. With decay a waits;
// without it a preempts.
func TestDecayedFairSharingDoesNotPreemptWhomItServes(t *testing.T) {
	for _, decay := range []bool{false, true} {
		c := sharedPool(true, 1000, 1000)
		if decay {
			c.SetUsageDecay(DecayConfig{HalfLife: time.Hour}, 5*time.Minute)
		}
		now := ranThreeHours(c, "a")
		for _, w := range backlog("b", 8, 100) {
			w.Queue = "lqb"
			c.AddOrUpdateWorkload(admitted(w, "b", "a100"))
		}
		s := c.Snapshot()
		s.SetNow(now.Add(time.Minute))
		ds := Schedule(s, map[string][]*Workload{"a": backlog("a-next", 4, 200)})
		victims := 0
		for _, d := range ds {
			victims += len(d.Victims)
		}
		if want := map[bool]bool{false: true, true: false}[decay]; (victims > 0) != want {
			t.Errorf("decay %v: %d victims, want preemption %v", decay, victims, want)
		}
	}
}

// TestDecayedFairSharingStillReclaimsNominalQuota: "a" (nominal 4) ran the
// pool's 8 GPUs for three hours, so its decayed share is far above b's;
// then b (nominal 4) borrowed a's 4. A workload of a within a's nominal
// quota takes it back: guaranteed quota is reclaimed whatever a queue ran
// in the past (Kueue's guarantee). Only a borrowing preemptor defers to the
// decayed order (TestDecayedFairSharingDoesNotPreemptWhomItServes).
func TestDecayedFairSharingStillReclaimsNominalQuota(t *testing.T) {
	a, b := inCohort(gpuQueue("a", gpus("a100", 4)), "pool"), inCohort(gpuQueue("b", gpus("a100", 4)), "pool")
	a.Preemption = Preemption{ReclaimWithinCohort: PreemptAny}
	b.Preemption = Preemption{ReclaimWithinCohort: PreemptAny}
	c := cacheWith([]*ClusterQueue{a, b}, "a100")
	c.UpsertCohort(&Cohort{Name: "pool", Weight: 1000})
	c.SetFairSharing(true)
	c.SetUsageDecay(DecayConfig{HalfLife: time.Hour}, 5*time.Minute)
	now := ranThreeHours(c, "a")
	for _, w := range backlog("b", 8, 100) {
		c.AddOrUpdateWorkload(admitted(w, "b", "a100"))
	}
	s := c.Snapshot()
	s.SetNow(now.Add(time.Minute))
	ds := Schedule(s, map[string][]*Workload{"a": {gpuWl("a-next", 0, 200, 1, 4)}})
	victims := 0
	for _, d := range ds {
		victims += len(d.Victims)
	}
	if victims != 4 {
		t.Errorf("%d victims, want b's 4 borrowed workloads preempted for a's nominal quota", victims)
	}
}

// ranThreeHours has queue q run eight 1-GPU workloads from epoch for three
// hours, sampled every 5 minutes, then finish them; it returns the time.
func ranThreeHours(c *Cache, q string) time.Time {
	ran := backlog(q, 8, 0)
	for _, w := range ran {
		c.AddOrUpdateWorkload(admitted(w, q, "a100"))
	}
	now := epoch
	for range 36 {
		now = now.Add(5 * time.Minute)
		c.SampleUsage(now)
	}
	for _, w := range ran {
		c.DeleteWorkload(w.Key)
	}
	return now
}
