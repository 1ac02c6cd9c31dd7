package scheduler

import (
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/quota"
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
		a, b := inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 4)), "pool"), inCohort(coretest.GPUQueue("b", coretest.GPUs("a100", 4)), "pool")
		a.Preemption = core.Preemption{ReclaimWithinCohort: core.PreemptAny}
		b.Preemption = core.Preemption{ReclaimWithinCohort: core.PreemptAny}
		c := cacheWith([]*core.ClusterQueue{a, b}, "a100")
		c.UpsertCohort(&core.Cohort{Name: "pool", Weight: 1000})
		c.cfg.FairSharing = true
		if decay {
			c.SetUsageDecay(quota.DecayConfig{HalfLife: time.Hour}, 5*time.Minute)
			c.SampleUsage(coretest.Epoch) // both at their current usage
		}
		for i, n := range []int64{3, 4} {
			q := []string{"a", "b"}[i]
			held := coretest.GPUWorkload("held-"+q, 0, 0, 1, n)
			held.Queue = q
			c.AddOrUpdateWorkload(coretest.Admitted(held, q, "a100"))
		}
		s := c.Snapshot()
		s.SetNow(coretest.Epoch.Add(time.Minute))
		ds := Schedule(s, map[string][]*core.Workload{"a": {coretest.GPUWorkload("a-new", 0, 20, 1, 1)}, "b": {coretest.GPUWorkload("b-new", 0, 10, 1, 1)}})
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
			c.SetUsageDecay(quota.DecayConfig{HalfLife: time.Hour}, 5*time.Minute)
		}
		now := ranThreeHours(c, "a")
		for _, w := range backlog("b", 8, 100) {
			w.Queue = "lqb"
			c.AddOrUpdateWorkload(coretest.Admitted(w, "b", "a100"))
		}
		s := c.Snapshot()
		s.SetNow(now.Add(time.Minute))
		ds := Schedule(s, map[string][]*core.Workload{"a": backlog("a-next", 4, 200)})
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
	a, b := inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 4)), "pool"), inCohort(coretest.GPUQueue("b", coretest.GPUs("a100", 4)), "pool")
	a.Preemption = core.Preemption{ReclaimWithinCohort: core.PreemptAny}
	b.Preemption = core.Preemption{ReclaimWithinCohort: core.PreemptAny}
	c := cacheWith([]*core.ClusterQueue{a, b}, "a100")
	c.UpsertCohort(&core.Cohort{Name: "pool", Weight: 1000})
	c.cfg.FairSharing = true
	c.SetUsageDecay(quota.DecayConfig{HalfLife: time.Hour}, 5*time.Minute)
	now := ranThreeHours(c, "a")
	for _, w := range backlog("b", 8, 100) {
		c.AddOrUpdateWorkload(coretest.Admitted(w, "b", "a100"))
	}
	s := c.Snapshot()
	s.SetNow(now.Add(time.Minute))
	ds := Schedule(s, map[string][]*core.Workload{"a": {coretest.GPUWorkload("a-next", 0, 200, 1, 4)}})
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
func ranThreeHours(c *testCache, q string) time.Time {
	ran := backlog(q, 8, 0)
	for _, w := range ran {
		c.AddOrUpdateWorkload(coretest.Admitted(w, q, "a100"))
	}
	now := coretest.Epoch
	for range 36 {
		now = now.Add(5 * time.Minute)
		c.SampleUsage(now)
	}
	for _, w := range ran {
		c.DeleteWorkload(w.Key)
	}
	return now
}
