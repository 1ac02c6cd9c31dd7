package scheduler

import (
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// Who reclaim may take quota back from. Each case failed before its fix.

// victimsOf schedules one pending workload of queue q and returns the names
// of the victims it picked.
func victimsOf(t *testing.T, c *testCache, q string, pending *core.Workload) []string {
	t.Helper()
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{q: {pending}})
	var out []string
	for _, d := range ds {
		for _, v := range d.Victims {
			out = append(out, v.Workload.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Kueue applies reclaimWithinCohort's priority filter in fair sharing too:
// LowerPriority never evicts a higher-priority workload of another queue.
func TestFairSharingHonoursReclaimLowerPriority(t *testing.T) {
	for policy, want := range map[core.PreemptionPolicy]int{core.PreemptLowerPriority: 0, core.PreemptAny: 1} {
		c := sharedPool(true, 1000, 1000)
		a := inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 0)), "pool")
		a.Preemption = core.Preemption{ReclaimWithinCohort: policy}
		c.UpsertClusterQueue(a)
		for _, w := range backlog("b", 8, 0) { // the whole pool
			w.Priority = 10
			c.AddOrUpdateWorkload(coretest.Admitted(w, "b", "a100"))
		}
		if v := victimsOf(t, c, "a", coretest.GPUWorkload("low", 5, 100, 1, 1)); len(v) != want {
			t.Errorf("policy %v: a priority-5 preemptor evicted %v, want %d victims", policy, v, want)
		}
	}
}

// A queue within its GPU quota but borrowing CPU keeps its GPU jobs: the
// preemptor is short of GPUs only, and the GPU borrower is the one to go.
func TestReclaimOnlyFromBorrowersOfWhatIsShort(t *testing.T) {
	queue := func(name string, cpu, gpu int64) *core.ClusterQueue {
		cq := &core.ClusterQueue{Name: name, Cohort: "c", NamespaceSelector: coretest.Everything{}, Weight: 1000,
			Preemption: core.Preemption{ReclaimWithinCohort: core.PreemptAny},
			ResourceGroups: []core.ResourceGroup{{Resources: []string{"cpu", coretest.GPU},
				Flavors: []core.FlavorQuotas{coretest.Quotas("a100", map[string]int64{"cpu": cpu, coretest.GPU: gpu})}}}}
		return cq
	}
	c := cacheWith([]*core.ClusterQueue{queue("a", 4, 4), queue("b", 2, 4), queue("gpu-borrower", 10, 0)}, "a100")
	// b: 4 GPUs (its own) and 6 cpu (4 borrowed), admitted last and of
	// lowest priority, so it would be the first candidate.
	c.AddOrUpdateWorkload(at(coretest.Admitted(coretest.Workload("b-job", 0, 5, 1, map[string]int64{"cpu": 6, coretest.GPU: 4}), "b", "a100"), 10))
	c.AddOrUpdateWorkload(at(coretest.Admitted(coretest.Workload("gpu-job", 5, 1, 1, map[string]int64{"cpu": 1, coretest.GPU: 4}), "gpu-borrower", "a100"), 1))
	got := victimsOf(t, c, "a", coretest.Workload("w", 0, 20, 1, map[string]int64{"cpu": 1, coretest.GPU: 4}))
	if !slices.Equal(got, []string{"gpu-job"}) {
		t.Errorf("victims %v, want [gpu-job]", got)
	}
}

// Nested cohorts: a queue that borrows only inside its own sub-cohort,
// which stays within its quota, uses nothing of the preemptor's; the
// preemptor's quota is with its sibling, and that is where reclaim goes.
func TestReclaimWalksUpToTheCommonCohort(t *testing.T) {
	q := func(name, cohort string, n int64) *core.ClusterQueue {
		cq := inCohort(coretest.GPUQueue(name, coretest.GPUs("a100", n)), cohort)
		cq.Preemption = core.Preemption{ReclaimWithinCohort: core.PreemptAny}
		return cq
	}
	c := cacheWith([]*core.ClusterQueue{q("a", "left", 4), q("a2", "left", 0), q("b", "right", 0), q("b2", "right", 4)}, "a100")
	c.UpsertCohort(&core.Cohort{Name: "left", Parent: "org", Weight: 1000})
	c.UpsertCohort(&core.Cohort{Name: "right", Parent: "org", Weight: 1000})
	c.UpsertCohort(&core.Cohort{Name: "org", Weight: 1000})
	c.AddOrUpdateWorkload(at(coretest.Admitted(coretest.GPUWorkload("a2-job", 1, 1, 1, 4), "a2", "a100"), 1))
	c.AddOrUpdateWorkload(at(coretest.Admitted(coretest.GPUWorkload("b-job", 0, 2, 1, 4), "b", "a100"), 2))
	got := victimsOf(t, c, "a", coretest.GPUWorkload("w", 0, 20, 1, 4))
	if !slices.Equal(got, []string{"a2-job"}) {
		t.Errorf("victims %v, want [a2-job]", got)
	}
}

// at sets when an admitted workload was admitted (seconds after epoch).
func at(w *core.Workload, s int) *core.Workload {
	w.AdmittedAt = coretest.Epoch.Add(time_(s))
	return w
}
