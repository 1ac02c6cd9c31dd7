package scheduler

import (
	"fmt"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// sharedPool: two queues with no quota of their own borrow everything from
// a cohort that holds 8 GPUs.
func sharedPool(fair bool, weightA, weightB int64) *testCache {
	a, b := inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 0)), "pool"), inCohort(coretest.GPUQueue("b", coretest.GPUs("a100", 0)), "pool")
	a.Weight, b.Weight = weightA, weightB
	a.Preemption = core.Preemption{ReclaimWithinCohort: core.PreemptAny}
	b.Preemption = core.Preemption{ReclaimWithinCohort: core.PreemptAny}
	c := cacheWith([]*core.ClusterQueue{a, b}, "a100")
	c.UpsertCohort(&core.Cohort{Name: "pool", Weight: 1000,
		ResourceGroups: []core.ResourceGroup{{Resources: []string{coretest.GPU}, Flavors: []core.FlavorQuotas{coretest.GPUs("a100", 8)}}}})
	c.cfg.FairSharing = fair
	return c
}

func backlog(queue string, n, ageOffset int) []*core.Workload {
	var out []*core.Workload
	for i := range n {
		w := coretest.GPUWorkload(fmt.Sprintf("%s%d", queue, i), 0, ageOffset+i, 1, 1)
		out = append(out, w)
	}
	return out
}

func admittedPerQueue(ds []Decision) map[string]int {
	out := map[string]int{}
	for _, d := range ds {
		if d.Admission != nil {
			out[d.Admission.ClusterQueue]++
		}
	}
	return out
}

func TestFairSharingTournament(t *testing.T) {
	cases := map[string]struct {
		fair         bool
		weightA      int64
		weightB      int64
		wantA, wantB int
	}{
		"without fair sharing the older backlog takes all": {fair: false, weightA: 1000, weightB: 1000, wantA: 8, wantB: 0},
		"equal weights share equally":                      {fair: true, weightA: 1000, weightB: 1000, wantA: 4, wantB: 4},
		"weights divide the share":                         {fair: true, weightA: 3000, weightB: 1000, wantA: 6, wantB: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := sharedPool(tc.fair, tc.weightA, tc.weightB)
			ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"a": backlog("a", 8, 0), "b": backlog("b", 8, 100)})
			got := admittedPerQueue(ds)
			if got["a"] != tc.wantA || got["b"] != tc.wantB {
				t.Errorf("admitted a=%d b=%d, want a=%d b=%d", got["a"], got["b"], tc.wantA, tc.wantB)
			}
		})
	}
}

// TestFairSharingPreemption: a queue that took the whole pool gives back
// to a newcomer until their shares are equal, and no further.
func TestFairSharingPreemption(t *testing.T) {
	c := sharedPool(true, 1000, 1000)
	for _, w := range backlog("a", 8, 0) {
		c.AddOrUpdateWorkload(coretest.Admitted(w, "a", "a100"))
	}
	preempted := 0
	for _, w := range backlog("b", 8, 100) {
		ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"b": {w}})
		d := ds[0]
		if len(d.Victims) == 0 {
			break
		}
		for _, v := range d.Victims {
			if v.Reason != InCohortFairSharing {
				t.Errorf("reason %s", v.Reason)
			}
			c.DeleteWorkload(v.Workload.Key) // its job stopped
			preempted++
		}
		ds = Schedule(c.Snapshot(), map[string][]*core.Workload{"b": {w}})
		if ds[0].Admission == nil {
			t.Fatalf("not admitted after its victims left: %s", ds[0].Message())
		}
		aw := *w
		aw.Admission = ds[0].Admission
		c.AddOrUpdateWorkload(&aw)
	}
	if preempted != 4 {
		t.Errorf("preempted %d, want 4 (shares equal at 4 GPUs each)", preempted)
	}
}
