package core

import (
	"slices"
	"strings"
	"testing"
)

func ptr64(v int64) *int64 { return &v }

// limited sets a flavor-resource's limits (whole units; -1 leaves unset).
func limited(fq FlavorQuotas, res string, borrowing, lending int64) FlavorQuotas {
	q := fq.Resources[res]
	if borrowing >= 0 {
		q.BorrowingLimit = ptr64(units(res, borrowing))
	}
	if lending >= 0 {
		q.LendingLimit = ptr64(units(res, lending))
	}
	fq.Resources[res] = q
	return fq
}

func inCohort(cq *ClusterQueue, cohort string) *ClusterQueue {
	cq.Cohort = cohort
	return cq
}

const gpuRes = "nvidia.com/gpu"

// TestCohortQuota: what a queue can use of its cohort's quota, flat and
// hierarchical, with borrowing and lending limits.
func TestCohortQuota(t *testing.T) {
	cases := map[string]struct {
		cqs     []*ClusterQueue
		cohorts []*Cohort
		used    map[string]int64 // per queue, GPUs of a100
		queue   string
		want    int64 // GPUs available to queue
	}{
		"alone": {
			cqs: []*ClusterQueue{gpuQueue("a", gpus("a100", 4))}, queue: "a", want: 4,
		},
		"borrows all the cohort lends": {
			cqs:   []*ClusterQueue{inCohort(gpuQueue("a", gpus("a100", 4)), "c"), inCohort(gpuQueue("b", gpus("a100", 4)), "c")},
			used:  map[string]int64{"b": 1},
			queue: "a", want: 7,
		},
		"borrowing limit": {
			cqs:   []*ClusterQueue{inCohort(gpuQueue("a", limited(gpus("a100", 4), gpuRes, 1, -1)), "c"), inCohort(gpuQueue("b", gpus("a100", 4)), "c")},
			queue: "a", want: 5,
		},
		"lending limit keeps the rest for its owner": {
			cqs:   []*ClusterQueue{inCohort(gpuQueue("a", gpus("a100", 4)), "c"), inCohort(gpuQueue("b", limited(gpus("a100", 4), gpuRes, -1, 1)), "c")},
			queue: "a", want: 5,
		},
		"the owner still has its guaranteed part when others borrowed the lent part": {
			cqs:   []*ClusterQueue{inCohort(gpuQueue("a", gpus("a100", 4)), "c"), inCohort(gpuQueue("b", limited(gpus("a100", 4), gpuRes, -1, 1)), "c")},
			used:  map[string]int64{"a": 5},
			queue: "b", want: 3,
		},
		"hierarchical: the root's own quota is borrowable below": {
			cqs: []*ClusterQueue{inCohort(gpuQueue("a", gpus("a100", 2)), "team"), inCohort(gpuQueue("b", gpus("a100", 2)), "team")},
			cohorts: []*Cohort{
				{Name: "org", ResourceGroups: []ResourceGroup{{Resources: []string{gpuRes}, Flavors: []FlavorQuotas{gpus("a100", 4)}}}, Weight: 1000},
				{Name: "team", Parent: "org", Weight: 1000},
			},
			used:  map[string]int64{"b": 1},
			queue: "a", want: 7,
		},
		"hierarchical: a cohort's borrowing limit caps its whole subtree": {
			cqs: []*ClusterQueue{inCohort(gpuQueue("a", gpus("a100", 2)), "team"), inCohort(gpuQueue("other", gpus("a100", 8)), "org")},
			cohorts: []*Cohort{
				{Name: "org", Weight: 1000},
				{Name: "team", Parent: "org", Weight: 1000, ResourceGroups: []ResourceGroup{{Resources: []string{gpuRes},
					Flavors: []FlavorQuotas{limited(gpus("a100", 0), gpuRes, 3, -1)}}}},
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
				c.AddOrUpdateWorkload(admitted(gpuWl("used-"+q, 0, 0, 1, n), q, "a100"))
			}
			got := c.Snapshot().Queue(tc.queue).Available(FlavorResource{"a100", gpuRes})
			if got != tc.want {
				t.Errorf("available = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCohortCycleMakesQueuesInactive(t *testing.T) {
	c := cacheWith([]*ClusterQueue{inCohort(gpuQueue("a", gpus("a100", 2)), "x")}, "a100")
	c.UpsertCohort(&Cohort{Name: "x", Parent: "y"})
	c.UpsertCohort(&Cohort{Name: "y", Parent: "x"})
	st := c.ClusterQueueStatus("a")
	if st.InactiveBecause != CohortCycle || !strings.Contains(st.Inactive, "(x -> y -> x)") {
		t.Errorf("inactive = %v %q, want CohortCycle naming x -> y -> x", st.InactiveBecause, st.Inactive)
	}
	c.UpsertCohort(&Cohort{Name: "y"})
	if st := c.ClusterQueueStatus("a"); st.InactiveBecause != Active {
		t.Errorf("still inactive once the cycle is broken: %v %q", st.InactiveBecause, st.Inactive)
	}
}

// TestFlavorFungibility: both ways for borrowing and preemption.
func TestFlavorFungibility(t *testing.T) {
	cases := map[string]struct {
		fung       FlavorFungibility
		preemption Preemption
		running    *Workload // admitted in a100
		want       string
	}{
		"borrow: stop at a flavor that fits by borrowing": {
			fung: FlavorFungibility{StopAtBorrow: true}, want: "a100",
		},
		"try next flavor before borrowing": {
			fung: FlavorFungibility{}, want: "h100",
		},
		"preempt: stop at a flavor that fits by preempting": {
			fung: FlavorFungibility{StopAtPreempt: true}, preemption: Preemption{WithinClusterQueue: PreemptLowerPriority},
			running: gpuWl("low", -1, 0, 1, 4), want: "a100",
		},
		"try next flavor before preempting": {
			fung: FlavorFungibility{}, preemption: Preemption{WithinClusterQueue: PreemptLowerPriority},
			running: gpuWl("low", -1, 0, 1, 4), want: "h100",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := inCohort(gpuQueue("a", gpus("a100", 4), gpus("h100", 6)), "c")
			a.Fungibility, a.Preemption = tc.fung, tc.preemption
			lender := inCohort(gpuQueue("lender", gpus("a100", 4)), "c")
			c := cacheWith([]*ClusterQueue{a, lender}, "a100", "h100")
			need := int64(6)
			if tc.running != nil {
				c.AddOrUpdateWorkload(admitted(tc.running, "a", "a100"))
				c.AddOrUpdateWorkload(admitted(gpuWl("lender-full", 0, 0, 1, 4), "lender", "a100"))
				need = 2
			}
			s := c.Snapshot()
			adm, _, noFit := Assign(s, s.Queue("a"), gpuWl("w", 0, 1, 1, need))
			if adm == nil {
				t.Fatalf("no fit: %s", noFit.Message())
			}
			if got := adm.PodSets[0].Flavors[gpuRes]; got != tc.want {
				t.Errorf("flavor %s, want %s", got, tc.want)
			}
		})
	}
}

// preemptionCase describes queues a and b in cohort c, admitted workloads,
// and a pending workload of queue a; it expects the victims.
type preemptionCase struct {
	a, b        Preemption
	aQuota      int64
	bQuota      int64
	bLending    int64 // -1: unset
	lender      int64 // quota of an idle third queue in the cohort
	admitted    map[string][]*Workload
	evicting    []string
	pending     *Workload
	wantVictims []string
	wantReason  PreemptionReason
	wantWaitFor bool
	wantAdmit   bool
}

func TestPreemption(t *testing.T) {
	within := func(p PreemptionPolicy) Preemption { return Preemption{WithinClusterQueue: p} }
	reclaim := func(p PreemptionPolicy) Preemption { return Preemption{ReclaimWithinCohort: p} }
	cases := map[string]preemptionCase{
		"within: lower priority is preempted": {
			a: within(PreemptLowerPriority), aQuota: 4, bQuota: 0,
			admitted: map[string][]*Workload{"a": {gpuWl("low", 0, 0, 1, 4)}},
			pending:  gpuWl("high", 5, 1, 1, 4), wantVictims: []string{"low"}, wantReason: InClusterQueue,
		},
		"within: equal priority is not preempted": {
			a: within(PreemptLowerPriority), aQuota: 4,
			admitted: map[string][]*Workload{"a": {gpuWl("same", 5, 2, 1, 4)}},
			pending:  gpuWl("w", 5, 1, 1, 4),
		},
		"within: newer equal priority is preempted under LowerOrNewerEqualPriority": {
			a: within(PreemptLowerOrNewerEqualPriority), aQuota: 4,
			admitted: map[string][]*Workload{"a": {gpuWl("newer", 5, 9, 1, 4)}},
			pending:  gpuWl("w", 5, 1, 1, 4), wantVictims: []string{"newer"}, wantReason: InClusterQueue,
		},
		"within: older equal priority is kept under LowerOrNewerEqualPriority": {
			a: within(PreemptLowerOrNewerEqualPriority), aQuota: 4,
			admitted: map[string][]*Workload{"a": {gpuWl("older", 5, 0, 1, 4)}},
			pending:  gpuWl("w", 5, 1, 1, 4),
		},
		"within: never": {
			a: within(PreemptNever), aQuota: 4,
			admitted: map[string][]*Workload{"a": {gpuWl("low", 0, 0, 1, 4)}},
			pending:  gpuWl("high", 5, 1, 1, 4),
		},
		"within: the smallest sufficient set": {
			a: within(PreemptLowerPriority), aQuota: 6,
			admitted: map[string][]*Workload{"a": {gpuWl("small1", 0, 3, 1, 1), gpuWl("small2", 0, 2, 1, 1), gpuWl("big", 1, 1, 1, 4)}},
			pending:  gpuWl("w", 5, 9, 1, 4), wantVictims: []string{"big"}, wantReason: InClusterQueue,
		},
		"reclaim any: take back lent quota from a borrowing queue": {
			a: reclaim(PreemptAny), aQuota: 4, bQuota: 4,
			admitted: map[string][]*Workload{"b": {gpuWl("b-own", 9, 0, 1, 4), gpuWl("b-borrowed", 9, 1, 1, 4)}},
			pending:  gpuWl("w", 0, 5, 1, 4), wantVictims: []string{"b-borrowed"}, wantReason: InCohortReclamation,
		},
		"reclaim never takes from a queue within its nominal quota": {
			a: reclaim(PreemptAny), aQuota: 4, bQuota: 4,
			admitted: map[string][]*Workload{"a": {gpuWl("a-own", 0, 0, 1, 2)}, "b": {gpuWl("b-own", 0, 0, 1, 4)}},
			pending:  gpuWl("w", 9, 5, 1, 4),
		},
		"reclaim never: lent quota is not taken back": {
			a: reclaim(PreemptNever), aQuota: 4, bQuota: 4,
			admitted: map[string][]*Workload{"b": {gpuWl("b-own", 0, 0, 1, 4), gpuWl("b-borrowed", 0, 1, 1, 4)}},
			pending:  gpuWl("w", 9, 5, 1, 4),
		},
		"reclaim lower priority keeps higher-priority borrowers": {
			a: reclaim(PreemptLowerPriority), aQuota: 4, bQuota: 4,
			admitted: map[string][]*Workload{"b": {gpuWl("b-own", 9, 0, 1, 4), gpuWl("b-borrowed", 9, 1, 1, 4)}},
			pending:  gpuWl("w", 0, 5, 1, 4),
		},
		"reclaim cannot help a workload that must borrow": {
			a: reclaim(PreemptAny), aQuota: 2, bQuota: 2, lender: 4,
			admitted: map[string][]*Workload{"b": {gpuWl("b-prio1", 1, 1, 1, 4), gpuWl("b-prio3", 3, 0, 1, 2)}},
			pending:  gpuWl("w", 5, 5, 1, 4),
		},
		"borrow within cohort: preempt a lower-priority borrower to borrow": {
			a:      Preemption{ReclaimWithinCohort: PreemptAny, BorrowWithinCohort: PreemptLowerPriority, MaxPriorityThreshold: ptr32(1)},
			aQuota: 2, bQuota: 2, lender: 4,
			admitted: map[string][]*Workload{"b": {gpuWl("b-prio1", 1, 1, 1, 4), gpuWl("b-prio3", 3, 0, 1, 2)}},
			pending:  gpuWl("w", 5, 5, 1, 4), wantVictims: []string{"b-prio1"}, wantReason: InCohortReclaimWhileBorrowing,
		},
		"borrow within cohort respects the priority threshold": {
			a:      Preemption{ReclaimWithinCohort: PreemptAny, BorrowWithinCohort: PreemptLowerPriority, MaxPriorityThreshold: ptr32(1)},
			aQuota: 2, bQuota: 2, lender: 4,
			admitted: map[string][]*Workload{"b": {gpuWl("b-prio3-big", 3, 1, 1, 5), gpuWl("b-prio1", 1, 0, 1, 1)}},
			pending:  gpuWl("w", 5, 5, 1, 4),
		},
		"wait for workloads already being evicted": {
			a: within(PreemptLowerPriority), aQuota: 4,
			admitted: map[string][]*Workload{"a": {gpuWl("going", 0, 0, 1, 4)}},
			evicting: []string{"going"},
			pending:  gpuWl("high", 5, 1, 1, 4), wantWaitFor: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { runPreemptionCase(t, tc) })
	}
}

func ptr32(v int32) *int32 { return &v }

func runPreemptionCase(t *testing.T, tc preemptionCase) {
	t.Helper()
	a := inCohort(gpuQueue("a", gpus("a100", tc.aQuota)), "c")
	a.Preemption = tc.a
	bq := gpus("a100", tc.bQuota)
	if tc.bLending > 0 {
		bq = limited(bq, gpuRes, -1, tc.bLending)
	}
	b := inCohort(gpuQueue("b", bq), "c")
	b.Preemption = tc.b
	cqs := []*ClusterQueue{a, b}
	if tc.lender > 0 {
		cqs = append(cqs, inCohort(gpuQueue("l", gpus("a100", tc.lender)), "c"))
	}
	c := cacheWith(cqs, "a100")
	for q, ws := range tc.admitted {
		for _, w := range ws {
			c.AddOrUpdateWorkload(admitted(w, q, "a100"))
		}
	}
	for _, name := range tc.evicting {
		c.MarkEvicting("ns/" + name)
	}
	ds := Schedule(c.Snapshot(), map[string][]*Workload{"a": {tc.pending}})
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
