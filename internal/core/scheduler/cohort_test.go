package scheduler

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/quota"
)

// limited sets a flavor-resource's limits (whole units; -1 leaves unset).
func limited(fq core.FlavorQuotas, res string, borrowing, lending int64) core.FlavorQuotas {
	q := fq.Resources[res]
	if borrowing >= 0 {
		q.BorrowingLimit = ptr.To[int64](coretest.Units(res, borrowing))
	}
	if lending >= 0 {
		q.LendingLimit = ptr.To[int64](coretest.Units(res, lending))
	}
	fq.Resources[res] = q
	return fq
}

func inCohort(cq *core.ClusterQueue, cohort string) *core.ClusterQueue {
	cq.Cohort = cohort
	return cq
}

// TestCohortQuota: what a queue can use of its cohort's quota, flat and
// hierarchical, with borrowing and lending limits.
func TestCohortQuota(t *testing.T) {
	cases := map[string]struct {
		cqs     []*core.ClusterQueue
		cohorts []*core.Cohort
		used    map[string]int64 // per queue, GPUs of a100
		queue   string
		want    int64 // GPUs available to queue
	}{
		"alone": {
			cqs: []*core.ClusterQueue{coretest.GPUQueue("a", coretest.GPUs("a100", 4))}, queue: "a", want: 4,
		},
		"borrows all the cohort lends": {
			cqs:   []*core.ClusterQueue{inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 4)), "c"), inCohort(coretest.GPUQueue("b", coretest.GPUs("a100", 4)), "c")},
			used:  map[string]int64{"b": 1},
			queue: "a", want: 7,
		},
		"borrowing limit": {
			cqs:   []*core.ClusterQueue{inCohort(coretest.GPUQueue("a", limited(coretest.GPUs("a100", 4), coretest.GPU, 1, -1)), "c"), inCohort(coretest.GPUQueue("b", coretest.GPUs("a100", 4)), "c")},
			queue: "a", want: 5,
		},
		"lending limit keeps the rest for its owner": {
			cqs:   []*core.ClusterQueue{inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 4)), "c"), inCohort(coretest.GPUQueue("b", limited(coretest.GPUs("a100", 4), coretest.GPU, -1, 1)), "c")},
			queue: "a", want: 5,
		},
		"the owner still has its guaranteed part when others borrowed the lent part": {
			cqs:   []*core.ClusterQueue{inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 4)), "c"), inCohort(coretest.GPUQueue("b", limited(coretest.GPUs("a100", 4), coretest.GPU, -1, 1)), "c")},
			used:  map[string]int64{"a": 5},
			queue: "b", want: 3,
		},
		"hierarchical: the root's own quota is borrowable below": {
			cqs: []*core.ClusterQueue{inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 2)), "team"), inCohort(coretest.GPUQueue("b", coretest.GPUs("a100", 2)), "team")},
			cohorts: []*core.Cohort{
				{Name: "org", ResourceGroups: []core.ResourceGroup{{Resources: []string{coretest.GPU}, Flavors: []core.FlavorQuotas{coretest.GPUs("a100", 4)}}}, Weight: 1000},
				{Name: "team", Parent: "org", Weight: 1000},
			},
			used:  map[string]int64{"b": 1},
			queue: "a", want: 7,
		},
		"hierarchical: a cohort's borrowing limit caps its whole subtree": {
			cqs: []*core.ClusterQueue{inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 2)), "team"), inCohort(coretest.GPUQueue("other", coretest.GPUs("a100", 8)), "org")},
			cohorts: []*core.Cohort{
				{Name: "org", Weight: 1000},
				{Name: "team", Parent: "org", Weight: 1000, ResourceGroups: []core.ResourceGroup{{Resources: []string{coretest.GPU},
					Flavors: []core.FlavorQuotas{limited(coretest.GPUs("a100", 0), coretest.GPU, 3, -1)}}}},
			},
			queue: "a", want: 5,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := cacheWith(tc.cqs, "a100")
			for _, co := range tc.cohorts {
				c.UpsertCohort(co)
			}
			for q, n := range tc.used {
				c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("used-"+q, 0, 0, 1, n), q, "a100"))
			}
			got := c.Snapshot().Queue(tc.queue).Available(core.FlavorResource{Flavor: "a100", Resource: coretest.GPU})
			if got != tc.want {
				t.Errorf("available = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCohortCycleMakesQueuesInactive(t *testing.T) {
	c := cacheWith([]*core.ClusterQueue{inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 2)), "x")}, "a100")
	c.UpsertCohort(&core.Cohort{Name: "x", Parent: "y"})
	c.UpsertCohort(&core.Cohort{Name: "y", Parent: "x"})
	st := c.ClusterQueueStatus("a")
	if st.InactiveBecause != quota.CohortCycle || !strings.Contains(st.Inactive, "(x -> y -> x)") {
		t.Errorf("inactive = %v %q, want CohortCycle naming x -> y -> x", st.InactiveBecause, st.Inactive)
	}
	c.UpsertCohort(&core.Cohort{Name: "y"})
	if st := c.ClusterQueueStatus("a"); st.InactiveBecause != quota.Active {
		t.Errorf("still inactive once the cycle is broken: %v %q", st.InactiveBecause, st.Inactive)
	}
}

// TestFlavorFungibility: both ways for borrowing and preemption.
func TestFlavorFungibility(t *testing.T) {
	cases := map[string]struct {
		fung       core.FlavorFungibility
		preemption core.Preemption
		running    *core.Workload // admitted in a100
		want       string
	}{
		"borrow: stop at a flavor that fits by borrowing": {
			fung: core.FlavorFungibility{StopAtBorrow: true}, want: "a100",
		},
		"try next flavor before borrowing": {
			fung: core.FlavorFungibility{}, want: "h100",
		},
		"preempt: stop at a flavor that fits by preempting": {
			fung: core.FlavorFungibility{StopAtPreempt: true}, preemption: core.Preemption{WithinClusterQueue: core.PreemptLowerPriority},
			running: coretest.GPUWorkload("low", -1, 0, 1, 4), want: "a100",
		},
		"try next flavor before preempting": {
			fung: core.FlavorFungibility{}, preemption: core.Preemption{WithinClusterQueue: core.PreemptLowerPriority},
			running: coretest.GPUWorkload("low", -1, 0, 1, 4), want: "h100",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 4), coretest.GPUs("h100", 6)), "c")
			a.Fungibility, a.Preemption = tc.fung, tc.preemption
			lender := inCohort(coretest.GPUQueue("lender", coretest.GPUs("a100", 4)), "c")
			c := cacheWith([]*core.ClusterQueue{a, lender}, "a100", "h100")
			need := int64(6)
			if tc.running != nil {
				c.AddOrUpdateWorkload(coretest.Admitted(tc.running, "a", "a100"))
				c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("lender-full", 0, 0, 1, 4), "lender", "a100"))
				need = 2
			}
			s := c.Snapshot()
			adm, _, noFit := Assign(s, s.Queue("a"), coretest.GPUWorkload("w", 0, 1, 1, need))
			if adm == nil {
				t.Fatalf("no fit: %s", noFit.Message())
			}
			if got := adm.PodSets[0].Flavors[coretest.GPU]; got != tc.want {
				t.Errorf("flavor %s, want %s", got, tc.want)
			}
		})
	}
}

// preemptionCase describes queues a and b in cohort c, admitted workloads,
// and a pending workload of queue a; it expects the victims.
type preemptionCase struct {
	a, b        core.Preemption
	aQuota      int64
	bQuota      int64
	bLending    int64 // -1: unset
	lender      int64 // quota of an idle third queue in the cohort
	admitted    map[string][]*core.Workload
	evicting    []string
	pending     *core.Workload
	wantVictims []string
	wantReason  PreemptionReason
	wantWaitFor bool
	wantAdmit   bool
}

func TestPreemption(t *testing.T) {
	within := func(p core.PreemptionPolicy) core.Preemption { return core.Preemption{WithinClusterQueue: p} }
	reclaim := func(p core.PreemptionPolicy) core.Preemption { return core.Preemption{ReclaimWithinCohort: p} }
	cases := map[string]preemptionCase{
		"within: lower priority is preempted": {
			a: within(core.PreemptLowerPriority), aQuota: 4, bQuota: 0,
			admitted: map[string][]*core.Workload{"a": {coretest.GPUWorkload("low", 0, 0, 1, 4)}},
			pending:  coretest.GPUWorkload("high", 5, 1, 1, 4), wantVictims: []string{"low"}, wantReason: InClusterQueue,
		},
		"within: equal priority is not preempted": {
			a: within(core.PreemptLowerPriority), aQuota: 4,
			admitted: map[string][]*core.Workload{"a": {coretest.GPUWorkload("same", 5, 2, 1, 4)}},
			pending:  coretest.GPUWorkload("w", 5, 1, 1, 4),
		},
		"within: newer equal priority is preempted under LowerOrNewerEqualPriority": {
			a: within(core.PreemptLowerOrNewerEqualPriority), aQuota: 4,
			admitted: map[string][]*core.Workload{"a": {coretest.GPUWorkload("newer", 5, 9, 1, 4)}},
			pending:  coretest.GPUWorkload("w", 5, 1, 1, 4), wantVictims: []string{"newer"}, wantReason: InClusterQueue,
		},
		"within: older equal priority is kept under LowerOrNewerEqualPriority": {
			a: within(core.PreemptLowerOrNewerEqualPriority), aQuota: 4,
			admitted: map[string][]*core.Workload{"a": {coretest.GPUWorkload("older", 5, 0, 1, 4)}},
			pending:  coretest.GPUWorkload("w", 5, 1, 1, 4),
		},
		"within: never": {
			a: within(core.PreemptNever), aQuota: 4,
			admitted: map[string][]*core.Workload{"a": {coretest.GPUWorkload("low", 0, 0, 1, 4)}},
			pending:  coretest.GPUWorkload("high", 5, 1, 1, 4),
		},
		"within: the smallest sufficient set": {
			a: within(core.PreemptLowerPriority), aQuota: 6,
			admitted: map[string][]*core.Workload{"a": {coretest.GPUWorkload("small1", 0, 3, 1, 1), coretest.GPUWorkload("small2", 0, 2, 1, 1), coretest.GPUWorkload("big", 1, 1, 1, 4)}},
			pending:  coretest.GPUWorkload("w", 5, 9, 1, 4), wantVictims: []string{"big"}, wantReason: InClusterQueue,
		},
		"reclaim any: take back lent quota from a borrowing queue": {
			a: reclaim(core.PreemptAny), aQuota: 4, bQuota: 4,
			admitted: map[string][]*core.Workload{"b": {coretest.GPUWorkload("b-own", 9, 0, 1, 4), coretest.GPUWorkload("b-borrowed", 9, 1, 1, 4)}},
			pending:  coretest.GPUWorkload("w", 0, 5, 1, 4), wantVictims: []string{"b-borrowed"}, wantReason: InCohortReclamation,
		},
		"reclaim never takes from a queue within its nominal quota": {
			a: reclaim(core.PreemptAny), aQuota: 4, bQuota: 4,
			admitted: map[string][]*core.Workload{"a": {coretest.GPUWorkload("a-own", 0, 0, 1, 2)}, "b": {coretest.GPUWorkload("b-own", 0, 0, 1, 4)}},
			pending:  coretest.GPUWorkload("w", 9, 5, 1, 4),
		},
		"reclaim never: lent quota is not taken back": {
			a: reclaim(core.PreemptNever), aQuota: 4, bQuota: 4,
			admitted: map[string][]*core.Workload{"b": {coretest.GPUWorkload("b-own", 0, 0, 1, 4), coretest.GPUWorkload("b-borrowed", 0, 1, 1, 4)}},
			pending:  coretest.GPUWorkload("w", 9, 5, 1, 4),
		},
		"reclaim lower priority keeps higher-priority borrowers": {
			a: reclaim(core.PreemptLowerPriority), aQuota: 4, bQuota: 4,
			admitted: map[string][]*core.Workload{"b": {coretest.GPUWorkload("b-own", 9, 0, 1, 4), coretest.GPUWorkload("b-borrowed", 9, 1, 1, 4)}},
			pending:  coretest.GPUWorkload("w", 0, 5, 1, 4),
		},
		"reclaim cannot help a workload that must borrow": {
			a: reclaim(core.PreemptAny), aQuota: 2, bQuota: 2, lender: 4,
			admitted: map[string][]*core.Workload{"b": {coretest.GPUWorkload("b-prio1", 1, 1, 1, 4), coretest.GPUWorkload("b-prio3", 3, 0, 1, 2)}},
			pending:  coretest.GPUWorkload("w", 5, 5, 1, 4),
		},
		"borrow within cohort: preempt a lower-priority borrower to borrow": {
			a:      core.Preemption{ReclaimWithinCohort: core.PreemptAny, BorrowWithinCohort: core.PreemptLowerPriority, MaxPriorityThreshold: ptr.To[int32](1)},
			aQuota: 2, bQuota: 2, lender: 4,
			admitted: map[string][]*core.Workload{"b": {coretest.GPUWorkload("b-prio1", 1, 1, 1, 4), coretest.GPUWorkload("b-prio3", 3, 0, 1, 2)}},
			pending:  coretest.GPUWorkload("w", 5, 5, 1, 4), wantVictims: []string{"b-prio1"}, wantReason: InCohortReclaimWhileBorrowing,
		},
		"borrow within cohort respects the priority threshold": {
			a:      core.Preemption{ReclaimWithinCohort: core.PreemptAny, BorrowWithinCohort: core.PreemptLowerPriority, MaxPriorityThreshold: ptr.To[int32](1)},
			aQuota: 2, bQuota: 2, lender: 4,
			admitted: map[string][]*core.Workload{"b": {coretest.GPUWorkload("b-prio3-big", 3, 1, 1, 5), coretest.GPUWorkload("b-prio1", 1, 0, 1, 1)}},
			pending:  coretest.GPUWorkload("w", 5, 5, 1, 4),
		},
		"wait for workloads already being evicted": {
			a: within(core.PreemptLowerPriority), aQuota: 4,
			admitted: map[string][]*core.Workload{"a": {coretest.GPUWorkload("going", 0, 0, 1, 4)}},
			evicting: []string{"going"},
			pending:  coretest.GPUWorkload("high", 5, 1, 1, 4), wantWaitFor: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { runPreemptionCase(t, tc) })
	}
}

func runPreemptionCase(t *testing.T, tc preemptionCase) {
	t.Helper()
	a := inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", tc.aQuota)), "c")
	a.Preemption = tc.a
	bq := coretest.GPUs("a100", tc.bQuota)
	if tc.bLending > 0 {
		bq = limited(bq, coretest.GPU, -1, tc.bLending)
	}
	b := inCohort(coretest.GPUQueue("b", bq), "c")
	b.Preemption = tc.b
	cqs := []*core.ClusterQueue{a, b}
	if tc.lender > 0 {
		cqs = append(cqs, inCohort(coretest.GPUQueue("l", coretest.GPUs("a100", tc.lender)), "c"))
	}
	c := cacheWith(cqs, "a100")
	for q, ws := range tc.admitted {
		for _, w := range ws {
			c.AddOrUpdateWorkload(coretest.Admitted(w, q, "a100"))
		}
	}
	for _, name := range tc.evicting {
		c.MarkEvicting("ns/" + name)
	}
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"a": {tc.pending}})
	if len(ds) != 1 {
		t.Fatalf("decisions: %+v", ds)
	}
	d := ds[0]
	if (d.Admission != nil) != tc.wantAdmit {
		t.Fatalf("admitted = %v, want %v (%s)", d.Admission != nil, tc.wantAdmit, d.Message())
	}
	var victims []string
	for _, v := range d.Victims {
		victims = append(victims, v.Workload.Name)
		if v.Reason != tc.wantReason {
			t.Errorf("reason %s, want %s", v.Reason, tc.wantReason)
		}
	}
	slices.Sort(victims)
	if !slices.Equal(victims, tc.wantVictims) {
		t.Errorf("victims %v, want %v (%s)", victims, tc.wantVictims, d.Message())
	}
	if waiting := strings.Contains(d.Message(), "being evicted"); waiting != tc.wantWaitFor {
		t.Errorf("waiting = %v, want %v (%s)", waiting, tc.wantWaitFor, d.Message())
	}
}
