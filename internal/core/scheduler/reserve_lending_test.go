package scheduler

import (
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// lendingLimitedTree is a nested cohort tree whose middle cohort has a
// lending limit:
//
//	top
//	├─ org
//	│   ├─ co (own quota 0, lendingLimit 8: keeps 14-8 = 6 for itself)
//	│   │   ├─ a (10 GPUs, holds room after 30m; a-run uses 4, bounded to 2h)
//	│   │   └─ b (4 GPUs)
//	│   └─ v (0 GPUs; v-run borrows 6 of what co lends)
//	└─ d (4 GPUs, reclaims from any borrower)
func lendingLimitedTree() *testCache {
	a := inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 10)), "co")
	a.StarvationAfter = 30 * time.Minute
	b := inCohort(coretest.GPUQueue("b", coretest.GPUs("a100", 4)), "co")
	v := inCohort(coretest.GPUQueue("v", coretest.GPUs("a100", 0)), "org")
	d := inCohort(coretest.GPUQueue("d", coretest.GPUs("a100", 4)), "top")
	d.Preemption = core.Preemption{ReclaimWithinCohort: core.PreemptAny}
	c := cacheWith([]*core.ClusterQueue{a, b, v, d}, "a100")
	c.UpsertCohort(&core.Cohort{Name: "top", Weight: 1000})
	c.UpsertCohort(&core.Cohort{Name: "org", Parent: "top", Weight: 1000})
	c.UpsertCohort(&core.Cohort{Name: "co", Parent: "org", Weight: 1000, ResourceGroups: []core.ResourceGroup{{
		Resources: []string{coretest.GPU}, Flavors: []core.FlavorQuotas{limited(coretest.GPUs("a100", 0), coretest.GPU, -1, 8)}}}})
	run := coretest.Admitted(coretest.GPUWorkload("a-run", 0, 0, 1, 4), "a", "a100")
	run.AdmittedAt, run.MaxRuntime = coretest.Epoch, 2*time.Hour
	c.AddOrUpdateWorkload(run)
	borrower := coretest.Admitted(coretest.GPUWorkload("v-run", 0, 0, 1, 6), "v", "a100")
	borrower.AdmittedAt = coretest.Epoch
	c.AddOrUpdateWorkload(borrower)
	return c
}

// TestHeldRoomUnderALendingLimitSurvivesABackfill: a's starving 10-GPU
// workload gets a's 6 free GPUs held; a 1-GPU backfill y releases and
// re-holds them (5 are held after it), and b admits a 2-GPU job, b1. The
// cycle ends in the same state whichever of y and b1 is decided first:
// org's workloads use 7 of the 8 its children bring, the rest of its usage
// is a's held room. So org is no borrower, v is no reclaim target, and d's
// preemptor finds no victim — in both orders. When b1 is decided between
// the hold and the backfill's release, the release used to take back at
// org more held room (6) than the hold had put there (4): co's lending
// limit lets a different part of a's change reach org once b1 moved co's
// usage, and the tree kept held room as a running total of what reached
// each node. org was then left with 3 GPUs counted as held instead of 5,
// looked like a borrower, and v's workload was evicted for room that is
// only held. The tree now bubbles what workloads use (node.work) on its
// own, so the order of decisions cannot change it.
func TestHeldRoomUnderALendingLimitSurvivesABackfill(t *testing.T) {
	cases := []struct {
		name       string
		yAge, bAge int
	}{
		{name: "sibling admitted after the backfill", yAge: 60, bAge: 61},
		{name: "sibling admitted between the hold and the backfill", yAge: 61, bAge: 60},
	}
	gpu := core.FlavorResource{Flavor: "a100", Resource: coretest.GPU}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := lendingLimitedTree().Snapshot()
			s.SetNow(coretest.Epoch.Add(time.Hour))
			heads := map[string][]*core.Workload{
				"a": {coretest.GPUWorkload("big", 0, 0, 1, 10), bounded("y", tc.yAge, 10*time.Minute)},
				"b": {coretest.GPUWorkload("b1", 0, tc.bAge, 1, 2)},
				"d": {coretest.GPUWorkload("p", 0, 62, 1, 4)},
			}
			ds := map[string]Decision{}
			for _, d := range Schedule(s, heads) {
				ds[d.Workload.Name] = d
			}
			if d := ds["big"]; d.Pending.Kind != core.Reserved {
				t.Fatalf("big: %v (%s), want Reserved", d.Pending.Kind, d.Message())
			}
			for _, name := range []string{"y", "b1"} {
				if d := ds[name]; d.Admission == nil {
					t.Fatalf("%s not admitted: %s", name, d.Message())
				}
			}
			org := s.Cohorts["org"]
			if d := ds["p"]; len(d.Victims) != 0 {
				t.Errorf("p evicts %s for room held in a; org uses %d of %d, %d of it by workloads (want 7)",
					d.Victims[0].Workload.Name, org.Usage[gpu], org.Subtree[gpu], org.Work[gpu])
			}
		})
	}
}
