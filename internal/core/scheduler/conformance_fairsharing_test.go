package scheduler

import (
	"maps"
	"slices"

	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/internal/core"
)

// Conformance: fair sharing — DRF admission order, weights (including 0),
// hierarchical tournaments, and fair-sharing preemption.

func fairSharingCases() []conformanceCase {
	return concat(fairAdmissionCases(), fairPreemptionCases(), fairWeightCases(), fairZeroWeightCases())
}

// pooled puts a case's queues under a root Cohort "pool" holding all the
// quota, with fair sharing on.
func pooled(c conformanceCase, size int64, queues ...*core.ClusterQueue) conformanceCase {
	c.fair, c.queues, c.cohorts = true, queues, []*core.Cohort{cohort("pool", "", cpus("default", size))}
	return c
}

func fairAdmissionCases() []conformanceCase {
	zero := func(name string) *core.ClusterQueue { return cq(name, "pool", cpus("default", 0)) }
	on := func(q string, ws ...*core.Workload) []*core.Workload { return runningAll(ws, q, "default") }
	return []conformanceCase{
		pooled(conformanceCase{
			// preemption.md "ClusterQueue share value": Kueue admits from the lowest share first,
			// which splits a shared pool evenly between equal weights.
			name:         "DRF admission splits a shared pool evenly between equal weights",
			pending:      map[string][]*core.Workload{"a": cpuJobs("a", 8, 0), "b": cpuJobs("b", 8, 100)},
			wantAdmitted: namesOf(concat(cpuJobs("a", 4, 0), cpuJobs("b", 4, 100))),
		}, 8, zero("a"), zero("b")),
		pooled(conformanceCase{
			// cohort.md "Hierarchical Cohorts": weights 0.75/0.25 trend to 75%/25% of the pool.
			name:         "DRF admission divides a shared pool in proportion to the weights",
			pending:      map[string][]*core.Workload{"a": cpuJobs("a", 8, 0), "b": cpuJobs("b", 8, 100)},
			wantAdmitted: namesOf(concat(cpuJobs("a", 6, 0), cpuJobs("b", 2, 100))),
		}, 8, weighted(zero("a"), 3000), zero("b")),
		pooled(conformanceCase{
			// scheduler_fs_test "with fair sharing: schedule workload with lowest share first".
			name:         "the queue with the lower share is admitted first, even if its workload is newer",
			running:      on("a", job("a0", 0, 0, 2)),
			pending:      map[string][]*core.Workload{"a": {job("a1", 0, 1, 2)}, "b": {job("b1", 0, 2, 2)}},
			wantAdmitted: []string{"b1"},
		}, 4, zero("a"), zero("b")),
		pooled(conformanceCase{
			// scheduler_fs_test "fair sharing schedule workload with lowest drf after admission".
			name:         "the share after admission decides the order, not the share before",
			running:      on("b", job("b0", 0, 0, 10)),
			pending:      map[string][]*core.Workload{"b": {job("b1", 0, 1, 50)}, "c": {job("c1", 0, 2, 75)}},
			wantAdmitted: []string{"b1"},
			knownGap: "Muster admits c1: pickFair (fairshare.go) compares the children's current shares (b 10%, c 0%); " +
				"Kueue's tournament compares each candidate's share with its workload admitted (computeDRS: b 60%, c 75%)",
		}, 100, zero("b"), zero("c")),
		pooled(conformanceCase{
			// scheduler_fs_test "fair sharing schedule highest priority first".
			name:         "equal shares: the higher priority is admitted first",
			pending:      map[string][]*core.Workload{"b": {job("b1", 99, 1, 10)}, "c": {job("c1", 101, 2, 10)}},
			wantAdmitted: []string{"c1"},
		}, 10, zero("b"), zero("c")),
		pooled(conformanceCase{
			// scheduler_fs_test "fair sharing schedule earliest timestamp first".
			name:         "equal shares and priority: the older workload is admitted first",
			pending:      map[string][]*core.Workload{"b": {job("b1", 101, 2, 10)}, "c": {job("c1", 101, 1, 10)}},
			wantAdmitted: []string{"c1"},
		}, 10, zero("b"), zero("c")),
		{
			// scheduler_fs_test "hierarchical fair sharing schedule workload which wins tournament":
			// A(200){B{d, e}, C{f, g}}.
			name: "the hierarchical tournament picks the lower-share cohort, then its lower-share queue",
			fair: true,
			queues: []*core.ClusterQueue{cq("d", "B", cpus("on-demand", 0)), cq("e", "B", cpus("on-demand", 0)),
				cq("f", "C", cpus("on-demand", 0)), cq("g", "C", cpus("on-demand", 0))},
			cohorts: []*core.Cohort{cohort("A", "", cpus("on-demand", 200)), cohort("B", "A"), cohort("C", "A")},
			running: []*core.Workload{running(job("d0", 0, 0, 10), "d", "on-demand"), running(job("e0", 0, 0, 20), "e", "on-demand"),
				running(job("g0", 0, 0, 100), "g", "on-demand")},
			pending: map[string][]*core.Workload{"d": {job("d1", 0, 1, 70)}, "e": {job("e1", 0, 2, 61)},
				"f": {job("f1", 0, 3, 1)}, "g": {job("g1", 0, 4, 1)}},
			wantAdmitted: []string{"d1"},
		},
	}
}

// fairABC is preemption_fair_test's base: a, b and c with 3 CPUs each
// (withinClusterQueue LowerPriority, reclaimWithinCohort Any,
// borrowWithinCohort threshold -3) and "preemptible" with none.
func fairABC() []*core.ClusterQueue {
	q := func(name string) *core.ClusterQueue {
		return borrowsWithin(preempts(cq(name, "all", cpus("default", 3)), core.PreemptLowerPriority, core.PreemptAny), ptr.To[int32](-3))
	}
	return []*core.ClusterQueue{q("a"), q("b"), q("c"), cq("preemptible", "all", cpus("default", 0))}
}

// fairRunning admits n one-cpu units per queue, named after the queue
// (b1..bN); queues go in name order and ages grow, so a queue's later units
// are admitted more recently.
func fairRunning(perQueue map[string]int) []*core.Workload {
	var out []*core.Workload
	for _, q := range slices.Sorted(maps.Keys(perQueue)) {
		out = append(out, runningAll(cpuJobs(q, perQueue[q], 10*len(out)), q, "default")...)
	}
	return out
}

func fairPreemptionCases() []conformanceCase {
	fair := func(c conformanceCase) conformanceCase {
		c.fair = true
		if c.queues == nil {
			c.queues = fairABC()
		}
		return c
	}
	in := func(q string, w *core.Workload) map[string][]*core.Workload {
		return map[string][]*core.Workload{q: {w}}
	}
	on := func(q string, ws ...*core.Workload) []*core.Workload { return runningAll(ws, q, "default") }
	return []conformanceCase{
		fair(conformanceCase{
			// preemption_fair_test "reclaim nominal from user using the most".
			name:    "fair sharing reclaims nominal quota from the queue borrowing the most",
			running: fairRunning(map[string]int{"a": 3, "b": 5, "c": 1}),
			pending: in("c", job("c_incoming", 0, 99, 1)), wantVictims: []string{"b5"},
		}),
		fair(conformanceCase{
			// preemption_fair_test "reclaim nominal from user using the most": the victim's reason is
			// InCohortReclamation (FairSharingPreemptWithinNominal, on by default).
			name:    "fair-sharing reclaim of nominal quota is reported as cohort reclamation",
			running: fairRunning(map[string]int{"a": 3, "b": 5, "c": 1}),
			pending: in("c", job("c_incoming", 0, 99, 1)), wantVictims: []string{"b5:" + string(InCohortReclamation)},
		}),
		fair(conformanceCase{
			// preemption_fair_test "reclaim borrowable quota from user using the most".
			name:    "fair sharing takes borrowed quota from the queue with the highest share",
			running: fairRunning(map[string]int{"a": 3, "b": 5, "c": 1}),
			pending: in("a", job("a_incoming", 0, 99, 1)), wantVictims: []string{"b5:" + string(InCohortFairSharing)},
		}),
		fair(conformanceCase{
			// preemption_fair_test "preempt one from each CQ borrowing" (quantities doubled).
			name: "fair sharing takes one workload from each borrowing queue when that is enough",
			queues: []*core.ClusterQueue{preempts(cq("a", "all", cpus("default", 6)), core.PreemptLowerPriority, core.PreemptAny),
				preempts(cq("b", "all", cpus("default", 6)), core.PreemptLowerPriority, core.PreemptAny),
				preempts(cq("c", "all", cpus("default", 6)), core.PreemptLowerPriority, core.PreemptAny)},
			running: concat(on("a", job("a3", 0, 1, 6), job("a2", 0, 2, 1), job("a1", 0, 3, 1)),
				on("b", job("b3", 0, 4, 6), job("b2", 0, 5, 1), job("b1", 0, 6, 1))),
			pending: in("c", job("c_incoming", 0, 99, 4)), wantVictims: []string{"a1", "b1"},
			knownGap: "Muster evicts b1 and b2: candidates (preempt.go) are ranked once by the queues' shares before " +
				"any eviction, and greedyMinimal keeps taking from b after its share fell below a's; Kueue picks the " +
				"queue with the highest current share before every eviction (TargetClusterQueueOrdering.nextTarget)",
		}),
		fair(conformanceCase{
			// preemption_fair_test "can't preempt when everyone under nominal".
			name:    "fair sharing preempts nothing while every queue is within nominal quota",
			running: fairRunning(map[string]int{"a": 3, "b": 3, "c": 3}),
			pending: in("c", job("c_incoming", 0, 99, 1)),
		}),
		fair(conformanceCase{
			// preemption_fair_test "can't preempt when it would switch the imbalance".
			name:    "fair sharing does not preempt when that only moves the imbalance",
			running: fairRunning(map[string]int{"a": 3, "b": 5}),
			pending: in("a", job("a_incoming", 0, 99, 2)),
		}),
		fair(conformanceCase{
			// preemption_fair_test "can preempt lower priority workloads from same CQ".
			name: "fair sharing evicts lower-priority workloads of the own queue",
			running: concat(on("a", job("a1_low", -1, 1, 1), job("a2_low", -1, 2, 1), job("a3", 0, 3, 1), job("a4", 0, 4, 1)),
				fairRunning(map[string]int{"b": 5})),
			pending:     in("a", job("a_incoming", 0, 99, 2)),
			wantVictims: []string{"a1_low:" + string(InClusterQueue), "a2_low:" + string(InClusterQueue)},
		}),
		fair(conformanceCase{
			// preemption_fair_test "can preempt a combination of same CQ and highest user".
			name: "fair sharing combines an own lower-priority workload with the top borrower's",
			running: concat(on("a", job("a_low", -1, 1, 1), job("a2", 0, 2, 1), job("a3", 0, 3, 1)),
				fairRunning(map[string]int{"b": 6})),
			pending:     in("a", job("a_incoming", 0, 99, 2)),
			wantVictims: []string{"a_low:" + string(InClusterQueue), "b6:" + string(InCohortFairSharing)},
		}),
		fair(conformanceCase{
			// preemption_fair_test "preempt huge workload if there is no other option, as long as the
			// target CQ gets a lower share".
			name:    "fair sharing evicts a huge borrower when nothing smaller will do",
			running: on("b", job("b1", 0, 1, 9)),
			pending: in("a", job("a_incoming", 0, 99, 2)), wantVictims: []string{"b1"},
		}),
		fair(conformanceCase{
			// preemption_fair_test "can't preempt huge workload if the incoming is also huge".
			name:    "fair sharing keeps a huge borrower for an incoming workload as big",
			running: concat(on("a", job("a1", 0, 1, 2)), on("b", job("b1", 0, 2, 7))),
			pending: in("a", job("a_incoming", 0, 99, 5)),
		}),
		fair(conformanceCase{
			// preemption_fair_test "can't preempt 2 smaller workloads if the incoming is huge".
			name:    "fair sharing keeps two borrowers whose eviction would overturn the shares",
			running: on("b", job("b1", 0, 1, 2), job("b2", 0, 2, 2), job("b3", 0, 3, 3)),
			pending: in("a", job("a_incoming", 0, 99, 6)),
		}),
		fair(conformanceCase{
			// preemption_fair_test "workloads under priority threshold not capriciously preempted":
			// borrowWithinCohort does not apply under fair sharing.
			name: "borrowWithinCohort does not make fair sharing evict low-priority borrowers",
			running: concat(fairRunning(map[string]int{"a": 3, "b": 3}),
				on("preemptible", job("preemptible1", -3, 71, 1), job("preemptible2", -3, 72, 1), job("preemptible3", -3, 73, 1))),
			pending: in("a", job("a_incoming", 0, 99, 2)),
		}),
		fair(conformanceCase{
			// cluster_queue.md "Preemption": under Fair Sharing, reclaimWithinCohort LowerPriority only
			// preempts workloads of lower priority than the pending one.
			name: "fair sharing honours reclaimWithinCohort LowerPriority",
			queues: []*core.ClusterQueue{preempts(cq("a", "all", cpus("default", 3)), core.PreemptLowerPriority, core.PreemptLowerPriority),
				cq("b", "all", cpus("default", 3))},
			running: runningAll([]*core.Workload{job("b1", 10, 1, 2), job("b2", 10, 2, 2), job("b3", 10, 3, 2)}, "b", "default"),
			pending: in("a", job("a_incoming", 0, 99, 3)),
		}),
		fair(conformanceCase{
			// preemption_fair_test "can preempt within cluster queue when no cohort".
			name:        "fair sharing preempts within a ClusterQueue that has no cohort",
			queues:      []*core.ClusterQueue{preempts(cq("solo", "", cpus("default", 1)), core.PreemptLowerPriority, core.PreemptNever)},
			running:     on("solo", job("a1", 0, 1, 1)),
			pending:     in("solo", job("a_incoming", 1000, 99, 1)),
			wantVictims: []string{"a1:" + string(InClusterQueue)},
		}),
	}
}

func fairWeightCases() []conformanceCase {
	abc := func(weights ...int64) []*core.ClusterQueue {
		var out []*core.ClusterQueue
		for i, name := range []string{"a", "b", "c"}[:len(weights)] {
			out = append(out, weighted(preempts(cq(name, "all", cpus("default", 3)), core.PreemptLowerPriority, core.PreemptAny), weights[i]))
		}
		return out
	}
	in := func(q string, w *core.Workload) map[string][]*core.Workload {
		return map[string][]*core.Workload{q: {w}}
	}
	zero := func(name string, weight int64) *core.ClusterQueue {
		return weighted(cq(name, "pool", cpus("default", 0)), weight)
	}
	return []conformanceCase{
		{
			// preemption_fair_test "CQ with higher weight can preempt more".
			name: "a queue with a higher weight takes more back", fair: true, queues: abc(2000, 1000, 1000),
			running: fairRunning(map[string]int{"a": 3, "b": 6}),
			pending: in("a", job("a_incoming", 0, 99, 2)), wantVictims: []string{"b5", "b6"},
		},
		{
			// preemption_fair_test "can preempt anything borrowing from CQ with 0 weight".
			name: "whatever a queue of weight 0 borrows can be preempted", fair: true, queues: abc(1000, 0, 1000),
			running: fairRunning(map[string]int{"a": 3, "b": 6}),
			pending: in("a", job("a_incoming", 0, 99, 3)), wantVictims: []string{"b4", "b5", "b6"},
		},
		{
			// preemption_fair_test "can't preempt nominal from CQ with 0 weight".
			name: "the nominal quota of a queue of weight 0 is not preempted", fair: true, queues: abc(1000, 0),
			running: fairRunning(map[string]int{"a": 3, "b": 3}),
			pending: in("a", job("a_incoming", 0, 99, 1)),
		},
		{
			// preemption_fair_test "can't preempt nominal from Cohort with 0 weight":
			// root{left-cq(0), right-cohort(1, weight 0){right-cq(0, weight 0)}}.
			name: "the nominal quota of a Cohort of weight 0 is not preempted",
			fair: true,
			queues: []*core.ClusterQueue{preempts(cq("left-cq", "root", cpus("default", 0)), core.PreemptNever, core.PreemptAny),
				weighted(preempts(cq("right-cq", "right-cohort", cpus("default", 0)), core.PreemptNever, core.PreemptAny), 0)},
			cohorts: []*core.Cohort{cohort("root", ""), func() *core.Cohort {
				co := cohort("right-cohort", "root", cpus("default", 1))
				co.Weight = 0
				return co
			}()},
			running: []*core.Workload{running(job("right-1", 0, 1, 1), "right-cq", "default")},
			pending: in("left-cq", job("left-1", 0, 99, 1)),
		},
		pooled(conformanceCase{
			// scheduler_fs_test "fair sharing two queues with weight 0 schedules workload which borrows less".
			name:         "between two queues of weight 0 the one borrowing less is admitted",
			running:      []*core.Workload{running(job("b0", 0, 0, 4), "b", "default")},
			pending:      map[string][]*core.Workload{"b": {job("b1", 9001, 1, 4)}, "c": {job("c1", 0, 2, 4)}},
			wantAdmitted: []string{"c1"},
		}, 8, zero("b", 0), zero("c", 0)),
		pooled(conformanceCase{
			// fair_sharing.md / Kueue's CompareDRS (pkg/cache/scheduler/fair_sharing.go): a queue of
			// weight 0 that borrows ranks after any queue of non-zero weight in the tournament.
			name:         "a queue of weight 0 gets nothing of the pool while a weighted queue wants it",
			pending:      map[string][]*core.Workload{"a": cpuJobs("a", 4, 0), "b": cpuJobs("b", 4, 100)},
			wantAdmitted: namesOf(cpuJobs("b", 4, 100)),
			knownGap: "Muster admits a1 first: pickFair (fairshare.go) ranks by the share before admission, 0 for both " +
				"idle queues, so the older head wins; Kueue ranks by the share with the workload admitted, infinite " +
				"for weight 0 (CompareDRS)",
		}, 4, zero("a", 0), zero("b", 1000)),
	}
}

func fairZeroWeightCases() []conformanceCase {
	reclaimer := func(name, cohort string, nominal, weight int64) *core.ClusterQueue {
		return weighted(preempts(cq(name, cohort, cpus("default", nominal)), core.PreemptNever, core.PreemptAny), weight)
	}
	lender := func(name, cohort string, nominal, weight int64) *core.ClusterQueue {
		return weighted(cq(name, cohort, cpus("default", nominal)), weight)
	}
	in := func(q string, w *core.Workload) map[string][]*core.Workload {
		return map[string][]*core.Workload{q: {w}}
	}
	weightedCohort := func(name, parent string, size, weight int64) *core.Cohort {
		co := cohort(name, parent, cpus("default", size))
		co.Weight = weight
		return co
	}
	return []conformanceCase{
		{
			// preemption_fair_test "cq with zero weight can reclaim nominal quota".
			name: "a queue of weight 0 reclaims its nominal quota", fair: true,
			queues:  []*core.ClusterQueue{reclaimer("a", "ROOT", 1, 0), lender("b", "ROOT", 0, 1000)},
			running: []*core.Workload{running(job("b1", 0, 1, 1), "b", "default")},
			pending: in("a", job("a1", 0, 99, 1)), wantVictims: []string{"b1"},
		},
		{
			// preemption_fair_test "zero weight borrowing preemptor cannot preempt from a borrowing CQ
			// with a non-zero weight".
			name: "a borrowing preemptor of weight 0 cannot take from a weighted borrower", fair: true,
			queues: []*core.ClusterQueue{reclaimer("a", "all", 1, 0), lender("b", "all", 1, 1000)},
			running: []*core.Workload{running(job("a1", 0, 1, 1), "a", "default"),
				running(job("b1", 0, 2, 1), "b", "default"), running(job("b2", 0, 3, 1), "b", "default")},
			pending: in("a", job("a_incoming", 0, 99, 1)),
		},
		{
			// preemption_fair_test "zero weight borrowing preemptor can preempt from a borrowing CQ which
			// also has zero weight": CompareDRS falls back to the unweighted shares.
			name: "between borrowers of weight 0 the unweighted shares decide preemption", fair: true,
			queues:      []*core.ClusterQueue{reclaimer("a", "all", 1, 0), lender("b", "all", 0, 0)},
			cohorts:     []*core.Cohort{cohort("all", "", cpus("default", 3))},
			running:     runningAll(cpuJobs("b", 3, 0), "b", "default"),
			pending:     in("a", job("a_incoming", 0, 99, 2)),
			wantVictims: []string{"b3"},
			knownGap: "Muster preempts nothing: share() (fairshare.go) is MaxInt64 for any borrower of weight 0, so " +
				"mayReclaimFrom finds b's share not above a's; Kueue's CompareDRS compares the unweighted ratios " +
				"when both weights are 0 (a 25% after admission, b 75%)",
		},
		{
			// preemption_fair_test "cohort with zero weight can reclaim nominal quota":
			// ROOT{A(1, weight 0){a(0, weight 0)}, b(0)}.
			name: "a Cohort of weight 0 reclaims its nominal quota", fair: true,
			queues:  []*core.ClusterQueue{reclaimer("a", "A", 0, 0), lender("b", "ROOT", 0, 1000)},
			cohorts: []*core.Cohort{cohort("ROOT", ""), weightedCohort("A", "ROOT", 1, 0)},
			running: []*core.Workload{running(job("b1", 0, 1, 1), "b", "default")},
			pending: in("a", job("a1", 0, 99, 1)), wantVictims: []string{"b1"},
			knownGap: "Muster preempts nothing: mayReclaimFrom (preempt.go) compares leaf shares, and a (weight 0, " +
				"borrowing from its Cohort) has an infinite share; Kueue compares below the lowest common ancestor, " +
				"where Cohort A stays within its own quota",
		},
		{
			// preemption_fair_test "nominal first: workload fitting within nominal can preempt despite
			// high aggregate DRS" (FairSharingPreemptWithinNominal, on by default).
			name: "a preemptor within nominal quota on its flavor reclaims despite borrowing another flavor",
			fair: true,
			queues: []*core.ClusterQueue{
				fungible(preempts(cq("a", "all", cpus("premium", 3), cpus("cheap", 0)), core.PreemptNever, core.PreemptAny), true, true),
				cq("b", "all", cpus("premium", 0), cpus("cheap", 6)),
			},
			running: concat(runningAll(cpuJobs("a_prem", 2, 0), "a", "premium"), runningAll(cpuJobs("a_cheap", 5, 10), "a", "cheap"),
				runningAll(cpuJobs("b_prem", 1, 20), "b", "premium")),
			pending:     in("a", job("a_incoming", 0, 99, 1)),
			wantVictims: []string{"b_prem1:" + string(InCohortReclamation)},
			knownGap: "Muster preempts nothing: mayReclaimFrom (preempt.go) requires b's share to exceed a's even when " +
				"a fits within its nominal quota on premium, and a's share is dominated by the cheap flavor it borrows; " +
				"Kueue lets a preemptor within nominal on the resources needing preemption reclaim from any borrower",
		},
		{
			// preemption_fair_test "borrowing cq in non-borrowing cohort is protected":
			// ROOT{a(5, weight 10), RIGHT(1, weight 0.1){b(0, weight 0.1)}}.
			name: "a borrowing queue under a Cohort within its quota is protected from fair sharing",
			fair: true,
			queues: []*core.ClusterQueue{weighted(preempts(cq("a", "ROOT", cpus("default", 5)), core.PreemptLowerPriority, core.PreemptAny), 10000),
				lender("b", "RIGHT", 0, 100)},
			cohorts: []*core.Cohort{cohort("ROOT", ""), weightedCohort("RIGHT", "ROOT", 1, 100)},
			running: concat(runningAll([]*core.Workload{job("a1", -1, 1, 1), job("a2", -1, 2, 1), job("a3", -1, 3, 1)}, "a", "default"),
				[]*core.Workload{running(job("b1", -1, 4, 1), "b", "default")}),
			pending:     in("a", job("unit", 0, 99, 5)),
			wantVictims: []string{"a1:" + string(InClusterQueue), "a2:" + string(InClusterQueue), "a3:" + string(InClusterQueue)},
		},
	}
}
