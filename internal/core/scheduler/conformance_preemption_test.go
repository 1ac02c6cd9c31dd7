package scheduler

import (
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// Conformance: classic preemption — withinClusterQueue, reclaimWithinCohort,
// borrowWithinCohort with maxPriorityThreshold, hierarchical cohorts and
// flavor fungibility for preemption.

func preemptionCases() []conformanceCase {
	return concat(withinQueueCases(), reclaimCases(), lendingReclaimCases(), borrowWithinCases(),
		hierarchicalPreemptionCases(), preemptFungibilityCases())
}

// standalone is preemption_test's "standalone" queue: 6 CPUs, no cohort,
// withinClusterQueue LowerPriority.
func standalone(within core.PreemptionPolicy) *core.ClusterQueue {
	return preempts(cq("standalone", "", cpus("default", 6)), within, core.PreemptNever)
}

func withinQueueCases() []conformanceCase {
	mem := func(name string, prio int32, age int, n int64) *core.Workload {
		return coretest.Workload(name, prio, age, 1, map[string]int64{"memory": n})
	}
	memQueue := func(flavors ...string) *core.ClusterQueue {
		var fqs []core.FlavorQuotas
		for _, f := range flavors {
			fqs = append(fqs, coretest.Quotas(f, map[string]int64{"memory": 3}))
		}
		return preempts(cq("standalone", "", fqs...), core.PreemptLowerPriority, core.PreemptNever)
	}
	lowMidHigh := func(low, mid, high int64) []*core.Workload {
		return runningAll([]*core.Workload{job("low", -1, 1, low), job("mid", 0, 2, mid), job("high", 1, 3, high)}, "standalone", "default")
	}
	pending := func(w *core.Workload) map[string][]*core.Workload {
		return map[string][]*core.Workload{"standalone": {w}}
	}
	return []conformanceCase{
		{
			// preemption_test "preempt lowest priority".
			name:   "withinClusterQueue LowerPriority evicts the lowest-priority workload",
			queues: []*core.ClusterQueue{standalone(core.PreemptLowerPriority)}, running: lowMidHigh(2, 2, 2),
			pending: pending(job("in", 1, 9, 2)), wantVictims: []string{"low:" + string(InClusterQueue)},
		},
		{
			// preemption_test "preempt multiple".
			name:   "withinClusterQueue LowerPriority evicts several when one is not enough",
			queues: []*core.ClusterQueue{standalone(core.PreemptLowerPriority)}, running: lowMidHigh(2, 2, 2),
			pending: pending(job("in", 1, 9, 3)), wantVictims: []string{"low", "mid"},
		},
		{
			// preemption_test "no preemption for low priority".
			name:   "withinClusterQueue LowerPriority never evicts equal or higher priority",
			queues: []*core.ClusterQueue{standalone(core.PreemptLowerPriority)}, running: lowMidHigh(3, 3, 0)[:2],
			pending: pending(job("in", -1, 9, 1)),
		},
		{
			// preemption_test "not enough low priority workloads".
			name:   "nothing is evicted when all lower-priority workloads together are not enough",
			queues: []*core.ClusterQueue{standalone(core.PreemptLowerPriority)}, running: lowMidHigh(3, 3, 0)[:2],
			pending: pending(job("in", 0, 9, 4)),
		},
		{
			// preemption_test "some free quota, preempt low priority".
			name:   "free quota counts toward the room: one victim is enough",
			queues: []*core.ClusterQueue{standalone(core.PreemptLowerPriority)}, running: lowMidHigh(1, 1, 3),
			pending: pending(job("in", 1, 9, 2)), wantVictims: []string{"low"},
		},
		{
			// preemption_test "minimal set excludes low priority".
			name:   "the minimal set leaves out a lower-priority workload that is not needed",
			queues: []*core.ClusterQueue{standalone(core.PreemptLowerPriority)}, running: lowMidHigh(1, 2, 3),
			pending: pending(job("in", 1, 9, 2)), wantVictims: []string{"mid"},
		},
		{
			// preemption_test "only preempt workloads using the chosen flavor".
			name:   "only workloads of the flavor chosen for the preemptor are evicted",
			queues: []*core.ClusterQueue{memQueue("beta", "alpha")},
			running: []*core.Workload{running(mem("low", -1, 1, 2), "standalone", "alpha"),
				running(mem("high", 1, 2, 1), "standalone", "alpha"), running(mem("mid", 0, 3, 2), "standalone", "beta")},
			pending: pending(mem("in", 1, 9, 2)), wantVictims: []string{"mid"},
		},
		{
			// preemption_test "each podset preempts a different flavor".
			name:   "each pod set preempts in the flavor it is assigned",
			queues: []*core.ClusterQueue{memQueue("alpha", "beta")},
			running: []*core.Workload{running(mem("low-alpha", -1, 1, 2), "standalone", "alpha"),
				running(mem("low-beta", -1, 2, 2), "standalone", "beta")},
			pending:     pending(multi("in", 0, 9, map[string]int64{"memory": 2}, map[string]int64{"memory": 2})),
			wantVictims: []string{"low-alpha", "low-beta"},
		},
		{
			// preemption_test "can't preempt workloads in ClusterQueue for withinClusterQueue=Never".
			name:   "withinClusterQueue Never evicts nothing in the queue",
			queues: []*core.ClusterQueue{standalone(core.PreemptNever)}, running: lowMidHigh(3, 3, 0)[:2],
			pending: pending(job("in", 1, 9, 4)),
		},
		{
			// preemption_test "preempt newer workloads with the same priority".
			name:   "withinClusterQueue LowerOrNewerEqualPriority evicts a newer equal-priority workload",
			queues: []*core.ClusterQueue{standalone(core.PreemptLowerOrNewerEqualPriority)},
			running: runningAll([]*core.Workload{job("wl1", 2, 1, 2), job("wl2", 1, 9, 2), job("wl3", 1, 0, 2)},
				"standalone", "default"),
			pending: pending(job("in", 1, 5, 2)), wantVictims: []string{"wl2:" + string(InClusterQueue)},
		},
		{
			// cluster_queue.md "Preemption": LowerOrNewerEqualPriority only takes equal priority
			// when the workload is newer than the preemptor.
			name:    "withinClusterQueue LowerOrNewerEqualPriority keeps an older equal-priority workload",
			queues:  []*core.ClusterQueue{standalone(core.PreemptLowerOrNewerEqualPriority)},
			running: []*core.Workload{running(job("older", 1, 0, 6), "standalone", "default")},
			pending: pending(job("in", 1, 5, 2)),
		},
		{
			// preemption.md "Candidates": among equal priority, the most recently admitted goes first.
			name:   "among equal priority the most recently admitted workload is evicted",
			queues: []*core.ClusterQueue{standalone(core.PreemptLowerPriority)},
			running: runningAll([]*core.Workload{job("old", -1, 1, 3), job("new", -1, 5, 3)},
				"standalone", "default"),
			pending: pending(job("in", 1, 9, 3)), wantVictims: []string{"new"},
		},
		{
			// preemption_hierarchical_test "prefer to preempt evicted workloads"; preemption_test
			// "skip duplicate preemption across calls": an evicted workload is chosen again, so
			// nothing new is evicted.
			name:   "a workload already being evicted is waited for instead of evicting another",
			queues: []*core.ClusterQueue{standalone(core.PreemptLowerPriority)},
			running: runningAll([]*core.Workload{job("going", -1, 1, 4), job("stays", -1, 2, 2)},
				"standalone", "default"),
			evicting: []string{"going"},
			pending:  pending(job("in", 1, 9, 4)),
		},
	}
}

// c1c2 are preemption_test's "c1" (LowerPriority/LowerPriority) and "c2"
// (Never/Any): 6 CPUs and 3 memory each, borrowingLimit equal to nominal.
func c1c2() []*core.ClusterQueue {
	q := func(name string) *core.ClusterQueue {
		return cq(name, "cohort", limited(limited(coretest.Quotas("default", map[string]int64{"cpu": 6, "memory": 3}), "cpu", 6, -1), "memory", 3, -1))
	}
	return []*core.ClusterQueue{preempts(q("c1"), core.PreemptLowerPriority, core.PreemptLowerPriority), preempts(q("c2"), core.PreemptNever, core.PreemptAny)}
}

func reclaimCases() []conformanceCase {
	on := func(q string, ws ...*core.Workload) []*core.Workload { return runningAll(ws, q, "default") }
	in := func(q string, w *core.Workload) map[string][]*core.Workload {
		return map[string][]*core.Workload{q: {w}}
	}
	ab := func(reclaim core.PreemptionPolicy) []*core.ClusterQueue {
		return []*core.ClusterQueue{preempts(cq("a", "c", cpus("default", 4)), core.PreemptLowerPriority, reclaim), cq("b", "c", cpus("default", 4))}
	}
	return []conformanceCase{
		{
			// preemption_test "reclaim quota from borrower".
			name:   "reclaim LowerPriority takes back lent quota from a lower-priority borrower",
			queues: c1c2(),
			running: concat(on("c1", job("c1-low", -1, 1, 3)),
				on("c2", job("c2-mid", 0, 2, 3), job("c2-high", 1, 3, 6))),
			pending: in("c1", job("in", 1, 9, 3)), wantVictims: []string{"c2-mid:" + string(InCohortReclamation)},
		},
		{
			// preemption_test "do not reclaim borrowed quota from same priority for
			// withinCohort=ReclaimFromLowerPriority".
			name:    "reclaim LowerPriority spares a borrower of equal priority",
			queues:  c1c2(),
			running: concat(on("c1", job("c1", 0, 1, 2)), on("c2", job("c2-1", 0, 2, 4), job("c2-2", 0, 3, 4))),
			pending: in("c1", job("in", 0, 9, 4)),
		},
		{
			// preemption_test "reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny";
			// cluster_queue.md: Any preempts irrespective of priority.
			name:        "reclaim Any takes back from a borrower of higher priority",
			queues:      c1c2(),
			running:     concat(on("c1", job("c1-1", 5, 1, 4), job("c1-2", 6, 2, 4)), on("c2", job("c2", 0, 3, 2))),
			pending:     in("c2", job("in", 0, 9, 4)),
			wantVictims: []string{"c1-1:" + string(InCohortReclamation)},
		},
		{
			// cluster_queue.md "Preemption": reclaimWithinCohort Never does not preempt in the cohort.
			name:    "reclaim Never leaves borrowers running",
			queues:  ab(core.PreemptNever),
			running: on("b", job("b-own", 0, 1, 4), job("b-borrowed", 0, 2, 4)),
			pending: in("a", job("in", 9, 9, 4)),
		},
		{
			// preemption_test "no workloads borrowing": only ClusterQueues above nominal quota lend
			// candidates.
			name:    "reclaim never takes from a queue within its nominal quota",
			queues:  c1c2(),
			running: concat(on("c1", job("c1-high", 1, 1, 4)), on("c2", job("c2-low-1", -1, 2, 6))),
			pending: in("c1", job("in", 1, 9, 4)),
		},
		{
			// preemption_test "not enough workloads borrowing".
			name:   "no reclaim when what others borrow cannot make room without borrowing",
			queues: c1c2(),
			running: concat(on("c1", job("c1-high", 1, 1, 4)),
				on("c2", job("c2-low-1", -1, 2, 4), job("c2-low-2", -1, 3, 4))),
			pending: in("c1", job("in", 1, 9, 4)),
		},
		{
			// preemption_test "preempt from all ClusterQueues in cohort".
			name:   "preemption evicts in the own queue and reclaims from the cohort together",
			queues: c1c2(),
			running: concat(on("c1", job("c1-low", -1, 1, 3), job("c1-mid", 0, 2, 2)),
				on("c2", job("c2-low", -1, 3, 3), job("c2-mid", 0, 4, 4))),
			pending:     in("c1", job("in", 0, 9, 4)),
			wantVictims: []string{"c1-low:" + string(InClusterQueue), "c2-low:" + string(InCohortReclamation)},
		},
		{
			// preemption.md "Candidates": workloads of borrowing queues are preferred first.
			name:        "a borrower's workload is reclaimed before the own queue's lower-priority one",
			queues:      ab(core.PreemptAny),
			running:     concat(on("a", job("a-low", -1, 1, 2)), on("b", job("b-own", 0, 2, 4), job("b-borrowed", 0, 3, 2))),
			pending:     in("a", job("in", 1, 9, 2)),
			wantVictims: []string{"b-borrowed:" + string(InCohortReclamation)},
		},
		{
			// preemption_test "preempting locally and borrowing other resources in cohort, without
			// cohort candidates".
			name:   "a preemptor borrowing another resource evicts only in its own queue",
			queues: c1c2(),
			running: concat(on("c1", job("c1-low", -1, 1, 4)),
				on("c2", job("c2-low-1", -1, 2, 4), job("c2-high-2", 1, 3, 4))),
			pending:     in("c1", coretest.Workload("in", 1, 9, 1, map[string]int64{"cpu": 4, "memory": 5})),
			wantVictims: []string{"c1-low:" + string(InClusterQueue)},
		},
		{
			// preemption_test "preempting locally and borrowing same resource in cohort"; preemption.md
			// "Targets" 1: when all candidates are in the own queue, it may end up borrowing.
			name:        "a preemptor may borrow after evicting in its own queue: one victim suffices",
			queues:      c1c2(),
			running:     concat(on("c1", job("c1-med", 0, 1, 4), job("c1-low", -1, 2, 4)), on("c2", job("c2-low-1", -1, 3, 4))),
			pending:     in("c1", job("in", 1, 9, 4)),
			wantVictims: []string{"c1-low:" + string(InClusterQueue)},
			knownGap: "Muster evicts c1-low and c1-med: planPreemption (preempt.go) always first looks for a set that " +
				"leaves the preemptor within nominal quota and returns it before trying with borrowing; Kueue " +
				"(classicalPreemptions) allows borrowing up to borrowingLimit straight away when no other queue offers " +
				"candidates or the preemptor's queue is already above nominal quota, and c1-low alone is enough",
		},
		{
			// preemption_test "preempting locally and not borrowing same resource in 1-queue cohort".
			name:        "in a one-queue cohort the preemptor evicts the workload that makes room",
			queues:      []*core.ClusterQueue{preempts(cq("l1", "legion", limited(cpus("default", 6), "cpu", 12, -1)), core.PreemptLowerPriority, core.PreemptLowerPriority)},
			running:     on("l1", job("l1-med", 0, 1, 4), job("l1-low", -1, 2, 2)),
			pending:     in("l1", job("in", 1, 9, 4)),
			wantVictims: []string{"l1-med:" + string(InClusterQueue)},
		},
		{
			// preemption.md "Reasons for preemption": the preemptee's queue must be above nominal
			// quota for a resource both require; preemption_test candidates use frsNeedPreemption.
			name: "reclaim takes only from queues borrowing the resource that needs preemption",
			queues: []*core.ClusterQueue{
				preempts(cq("a", "c", coretest.Quotas("default", map[string]int64{"cpu": 8, "gpu": 4})), core.PreemptNever, core.PreemptAny),
				cq("b", "c", coretest.Quotas("default", map[string]int64{"cpu": 0, "gpu": 4})),
				cq("g", "c", coretest.Quotas("default", map[string]int64{"cpu": 0, "gpu": 0})),
			},
			running: []*core.Workload{
				running(coretest.Workload("b-mixed", 0, 1, 1, map[string]int64{"cpu": 4, "gpu": 4}), "b", "default"),
				running(coretest.Workload("g-gpu", 5, 2, 1, map[string]int64{"gpu": 4}), "g", "default"),
			},
			pending:     in("a", coretest.Workload("in", 9, 9, 1, map[string]int64{"cpu": 1, "gpu": 4})),
			wantVictims: []string{"g-gpu:" + string(InCohortReclamation)},
		},
	}
}

func lendingReclaimCases() []conformanceCase {
	lend := func() []*core.ClusterQueue {
		return []*core.ClusterQueue{
			preempts(cq("lend1", "cohort-lend", limited(cpus("default", 6), "cpu", -1, 4)), core.PreemptLowerPriority, core.PreemptLowerPriority),
			preempts(cq("lend2", "cohort-lend", limited(cpus("default", 6), "cpu", -1, 2)), core.PreemptLowerPriority, core.PreemptLowerPriority),
		}
	}
	on := func(q string, ws ...*core.Workload) []*core.Workload { return runningAll(ws, q, "default") }
	return []conformanceCase{
		{
			// preemption_test "reclaim quota from lender".
			name:        "reclaim with lendingLimits takes back from the borrowing lender",
			queues:      lend(),
			running:     concat(on("lend1", job("lend1-low", -1, 1, 3)), on("lend2", job("lend2-mid", 0, 2, 3), job("lend2-high", 1, 3, 4))),
			pending:     map[string][]*core.Workload{"lend1": {job("in", 1, 9, 3)}},
			wantVictims: []string{"lend2-mid:" + string(InCohortReclamation)},
		},
		{
			// preemption_test "preempt from all ClusterQueues in cohort-lend".
			name:   "with lendingLimits preemption evicts in the own queue and reclaims together",
			queues: lend(),
			running: concat(on("lend1", job("lend1-low", -1, 1, 3), job("lend1-mid", 0, 2, 2)),
				on("lend2", job("lend2-low", -1, 3, 3), job("lend2-mid", 0, 4, 4))),
			pending:     map[string][]*core.Workload{"lend1": {job("in", 0, 9, 4)}},
			wantVictims: []string{"lend1-low:" + string(InClusterQueue), "lend2-low:" + string(InCohortReclamation)},
		},
		{
			// preemption_test "cannot preempt from other ClusterQueues if exceeds requestable quota
			// including lending limit".
			name:    "nothing is preempted for more than a queue can ever use under lendingLimits",
			queues:  lend(),
			running: on("lend2", job("lend2-low", -1, 1, 10)),
			pending: map[string][]*core.Workload{"lend1": {job("in", 0, 9, 9)}},
		},
	}
}

// sharedCohort is preemption_test's "with_shared_cq" cohort: four small
// queues that may borrow (borrowWithinCohort LowerPriority, threshold 0) and
// a "shared" queue of 10 CPUs.
func sharedCohort() []*core.ClusterQueue {
	q := func(name string, nominal, borrowing int64, within, reclaim core.PreemptionPolicy) *core.ClusterQueue {
		return borrowsWithin(preempts(cq(name, "with_shared_cq", limited(cpus("default", nominal), "cpu", borrowing, -1)), within, reclaim), ptr.To[int32](0))
	}
	return []*core.ClusterQueue{
		q("a_standard", 1, 12, core.PreemptNever, core.PreemptLowerPriority),
		q("b_standard", 1, 12, core.PreemptLowerPriority, core.PreemptAny),
		q("a_best_effort", 1, 12, core.PreemptNever, core.PreemptLowerPriority),
		q("b_best_effort", 0, 13, core.PreemptNever, core.PreemptLowerPriority),
		cq("shared", "with_shared_cq", cpus("default", 10)),
	}
}

func borrowWithinCases() []conformanceCase {
	on := func(q string, ws ...*core.Workload) []*core.Workload { return runningAll(ws, q, "default") }
	in := func(q string, w *core.Workload) map[string][]*core.Workload {
		return map[string][]*core.Workload{q: {w}}
	}
	return []conformanceCase{
		{
			// preemption_test "use BorrowWithinCohort; allow preempting a lower-priority workload from
			// another ClusterQueue while borrowing".
			name:        "borrowWithinCohort evicts a lower-priority workload of another queue to borrow",
			queues:      sharedCohort(),
			running:     concat(on("a_best_effort", job("a_best_effort_low", -1, 1, 10)), on("b_best_effort", job("b_best_effort_low", -1, 2, 1))),
			pending:     in("a_standard", job("in", 0, 9, 10)),
			wantVictims: []string{"a_best_effort_low:" + string(InCohortReclaimWhileBorrowing)},
		},
		{
			// preemption_test "use BorrowWithinCohort; don't allow preempting a lower-priority workload
			// with priority above MaxPriorityThreshold, if borrowing is required even after the preemption".
			name:    "borrowWithinCohort spares workloads above maxPriorityThreshold",
			queues:  sharedCohort(),
			running: on("b_standard", job("b_standard", 1, 1, 10)),
			pending: in("a_standard", job("in", 2, 9, 10)),
		},
		{
			// preemption_test "use BorrowWithinCohort; allow preempting a lower-priority workload with
			// priority above MaxPriorityThreshold, if borrowing is not required after the preemption".
			name:        "a preemptor that will not borrow reclaims above maxPriorityThreshold",
			queues:      sharedCohort(),
			running:     on("b_standard", job("b_standard", 1, 1, 13)),
			pending:     in("a_standard", job("in", 2, 9, 1)),
			wantVictims: []string{"b_standard:" + string(InCohortReclamation)},
		},
		{
			// preemption_test "use BorrowWithinCohort; don't allow for preemption of lower-priority
			// workload from the same ClusterQueue".
			name:    "borrowWithinCohort does not evict in the own queue when withinClusterQueue is Never",
			queues:  sharedCohort(),
			running: on("a_standard", job("a_standard", 1, 1, 13)),
			pending: in("a_standard", job("in", 2, 9, 1)),
		},
		{
			// preemption_test "use BorrowWithinCohort; only preempt from CQ if no workloads below
			// threshold and already above nominal".
			name:   "borrowWithinCohort evicts in the own queue when nothing below the threshold borrows",
			queues: sharedCohort(),
			running: concat(on("a_standard", job("a_standard_1", 1, 1, 10), job("a_standard_2", 1, 2, 1)),
				on("b_standard", job("b_standard_1", 1, 3, 1), job("b_standard_2", 2, 4, 1))),
			pending:     in("b_standard", job("in", 3, 9, 1)),
			wantVictims: []string{"b_standard_1:" + string(InClusterQueue)},
			knownGap: "Muster evicts b_standard_1 and b_standard_2: planPreemption (preempt.go) returns the first set " +
				"that leaves the preemptor within nominal quota before trying while borrowing; with borrowWithinCohort " +
				"enabled Kueue (classicalPreemptions) tries while borrowing first, with own-queue and below-threshold " +
				"candidates, and b_standard_1 alone is enough",
		},
		{
			// preemption_test "use BorrowWithinCohort; preempt from CQ and from other CQs with
			// workloads below threshold".
			name:   "borrowWithinCohort evicts in the own queue and below the threshold elsewhere",
			queues: sharedCohort(),
			running: concat(on("b_standard", job("b_standard_high", 2, 1, 10), job("b_standard_mid", 1, 2, 1)),
				on("a_best_effort", job("a_best_effort_low", -1, 3, 1), job("a_best_effort_lower", -2, 4, 1))),
			pending:     in("b_standard", job("in", 2, 9, 2)),
			wantVictims: []string{"a_best_effort_lower:" + string(InCohortReclaimWhileBorrowing), "b_standard_mid:" + string(InClusterQueue)},
		},
		{
			// preemption.md "Classic Preemption": a workload above nominal quota may preempt in the
			// cohort only with borrowWithinCohort; scheduler_test "A workload is only eligible to do
			// preemptions if it fits fully within nominal quota".
			name: "without borrowWithinCohort a workload that must borrow reclaims nothing",
			queues: []*core.ClusterQueue{preempts(cq("other-alpha", "other", cpus("default", 2)), core.PreemptNever, core.PreemptAny),
				cq("other-beta", "other", cpus("default", 2))},
			running: concat(on("other-alpha", job("a1", -1, 1, 1)), on("other-beta", job("b1", -1, 2, 1))),
			pending: in("other-alpha", job("incoming", 1, 9, 3)),
		},
	}
}

func hierarchicalPreemptionCases() []conformanceCase {
	anyQ := func(q *core.ClusterQueue) *core.ClusterQueue {
		return preempts(q, core.PreemptLowerPriority, core.PreemptAny)
	}
	on := func(q string, ws ...*core.Workload) []*core.Workload { return runningAll(ws, q, "default") }
	return []conformanceCase{
		{
			// preemption_hierarchical_test "preempt with hierarchical advantage": R{C(2){q(0)}, q_borrowing(0)}.
			name:        "a queue reclaims its Cohort's quota from a borrower elsewhere in the tree",
			queues:      []*core.ClusterQueue{anyQ(cq("q", "c", cpus("default", 0))), anyQ(cq("q_borrowing", "r", cpus("default", 0)))},
			cohorts:     []*core.Cohort{cohort("r", ""), cohort("c", "r", cpus("default", 2))},
			running:     on("q_borrowing", job("admitted2", 0, 1, 2)),
			pending:     map[string][]*core.Workload{"q": {job("in", 0, 9, 2)}},
			wantVictims: []string{"admitted2:" + string(InCohortReclamation)},
			knownGap: "Muster preempts nothing: planPreemption's no-borrowing pass (fitsAfter in preempt.go) compares " +
				"with the ClusterQueue's own nominal quota (0), and the borrowing pass needs borrowWithinCohort; Kueue " +
				"gives q hierarchical advantage because its Cohort's quota holds the request (collectCandidatesForHierarchicalReclaim)",
		},
		{
			// preemption_hierarchical_test "incoming workload fits in CQ nominal quota":
			// R{C(2){q(4), q_same_cohort(0)}, q_borrowing(0)}.
			name: "a queue within nominal reclaims from borrowers at every level of the tree",
			queues: []*core.ClusterQueue{anyQ(cq("q", "c", cpus("default", 4))), anyQ(cq("q_same_cohort", "c", cpus("default", 0))),
				anyQ(cq("q_borrowing", "r", cpus("default", 0)))},
			cohorts: []*core.Cohort{cohort("r", ""), cohort("c", "r", cpus("default", 2))},
			running: concat(on("q_borrowing", job("admitted_borrowing", 10, 1, 3)),
				on("q_same_cohort", job("admitted_same_cohort", 10, 2, 3))),
			pending:     map[string][]*core.Workload{"q": {job("in", 0, 9, 4)}},
			wantVictims: []string{"admitted_borrowing:" + string(InCohortReclamation), "admitted_same_cohort:" + string(InCohortReclamation)},
		},
		{
			// preemption_hierarchical_test collectCandidatesInSubtree: subtrees within their quota
			// yield no candidates ("avoid queues within nominal quota", "reclaim in complex hierarchy").
			name: "reclaim skips queues under a Cohort that is within its own quota",
			queues: []*core.ClusterQueue{anyQ(cq("qx", "root", cpus("default", 4))), cq("qy", "team", cpus("default", 0)),
				cq("qz", "root", cpus("default", 0))},
			cohorts:     []*core.Cohort{cohort("root", ""), cohort("team", "root", cpus("default", 4))},
			running:     concat(on("qy", job("y-low", -5, 1, 4)), on("qz", job("z", 0, 2, 4))),
			pending:     map[string][]*core.Workload{"qx": {job("in", 9, 9, 4)}},
			wantVictims: []string{"z:" + string(InCohortReclamation)},
		},
		{
			// scheduler_test "capacity not blocked when lending clusterqueue can reclaim (ReclaimWithinCohort=Any)".
			name: "a lender that can always reclaim does not hold its idle quota back from borrowers",
			queues: []*core.ClusterQueue{preempts(cq("ClusterQueueA", "root", cpus("on-demand", 2)), core.PreemptNever, core.PreemptAny),
				cq("ClusterQueueB", "root", cpus("on-demand", 0))},
			running: []*core.Workload{running(job("a1-admitted", 0, 1, 1), "ClusterQueueA", "on-demand")},
			pending: map[string][]*core.Workload{"ClusterQueueA": {job("a2-pending", 0, 2, 2)},
				"ClusterQueueB": {job("b1-pending", 0, 3, 1)}},
			wantAdmitted: []string{"b1-pending"},
		},
		{
			// scheduler_test "capacity blocked when lending clusterqueue not guaranteed to reclaim
			// (ReclaimWithinCohort=LowerPriority)".
			name: "a lender that may not reclaim holds its quota for a preemptor without candidates",
			queues: []*core.ClusterQueue{preempts(cq("ClusterQueueA", "root", cpus("on-demand", 2)), core.PreemptNever, core.PreemptLowerPriority),
				cq("ClusterQueueB", "root", cpus("on-demand", 0))},
			running: []*core.Workload{running(job("a1-admitted", 0, 1, 1), "ClusterQueueA", "on-demand")},
			pending: map[string][]*core.Workload{"ClusterQueueA": {job("a2-pending", 0, 2, 2)},
				"ClusterQueueB": {job("b1-pending", 0, 3, 1)}},
		},
	}
}

func preemptFungibilityCases() []conformanceCase {
	twoFlavors := func(stopAtBorrow, stopAtPreempt bool) *core.ClusterQueue {
		return fungible(preempts(cq("q", "", cpus("on-demand", 4), cpus("spot", 4)), core.PreemptLowerPriority, core.PreemptNever), stopAtBorrow, stopAtPreempt)
	}
	in := func(q string, w *core.Workload) map[string][]*core.Workload {
		return map[string][]*core.Workload{q: {w}}
	}
	return []conformanceCase{
		{
			// cluster_queue.md "FlavorFungibility": whenCanPreempt MayStopSearch (Preempt) stops at a
			// flavor that fits by preempting.
			name:        "whenCanPreempt Preempt stops at the first flavor that fits by preempting",
			queues:      []*core.ClusterQueue{twoFlavors(true, true)},
			running:     []*core.Workload{running(job("low", -1, 1, 4), "q", "on-demand")},
			pending:     in("q", job("in", 1, 9, 4)),
			wantVictims: []string{"low"},
		},
		{
			// scheduler_test "admit to second flavor when first needs preemption; WhenCanPreempt: TryNextFlavor".
			name:         "whenCanPreempt TryNextFlavor admits in a later flavor that fits",
			queues:       []*core.ClusterQueue{twoFlavors(true, false)},
			running:      []*core.Workload{running(job("blocker", 50, 1, 4), "q", "on-demand")},
			pending:      in("q", job("test-wl", 100, 9, 4)),
			wantAdmitted: []string{"test-wl@spot"},
		},
		{
			// cluster_queue.md "FlavorFungibility": with no flavor fitting, Kueue selects one that
			// needs preemption, in flavor order.
			name:   "whenCanPreempt TryNextFlavor preempts in the first flavor when all need preemption",
			queues: []*core.ClusterQueue{twoFlavors(true, false)},
			running: []*core.Workload{running(job("low-od", -1, 1, 4), "q", "on-demand"),
				running(job("low-spot", -1, 2, 4), "q", "spot")},
			pending:     in("q", job("in", 1, 9, 4)),
			wantVictims: []string{"low-od"},
		},
		{
			// scheduler_test "BorrowingOverPreemption preference: borrow in second flavor instead of
			// preempting in first".
			name: "borrowing in a later flavor is preferred to preempting in the first",
			queues: []*core.ClusterQueue{
				fungible(preempts(cq("bop-cq", "bop-cohort", limited(cpus("on-demand", 5), "cpu", 0, -1),
					limited(cpus("spot", 0), "cpu", 5, -1)), core.PreemptLowerPriority, core.PreemptNever), false, false),
				cq("bop-lender", "bop-cohort", cpus("on-demand", 0), cpus("spot", 5)),
			},
			running:      []*core.Workload{running(job("low-bop", -1, 1, 5), "bop-cq", "on-demand")},
			pending:      in("bop-cq", job("high-bop", 0, 9, 5)),
			wantAdmitted: []string{"high-bop@spot"},
		},
		{
			// scheduler_test "use second flavor when the first has no preemption candidates;
			// WhenCanPreempt: MayStopSearch".
			name: "whenCanPreempt Preempt passes over a flavor with no preemption candidates",
			queues: []*core.ClusterQueue{fungible(preempts(cq("other-alpha", "", limited(cpus("on-demand", 50), "cpu", 50, -1),
				limited(cpus("spot", 100), "cpu", 0, -1)), core.PreemptLowerPriority, core.PreemptNever), true, true)},
			running:      []*core.Workload{running(job("admitted", 0, 1, 50), "other-alpha", "on-demand")},
			pending:      in("other-alpha", job("new", 0, 9, 20)),
			wantAdmitted: []string{"new@spot"},
			knownGap: "Muster leaves new pending: pickFlavor (assign.go) stops at on-demand because it fits by preempting, " +
				"and preemption then finds no lower-priority victim; Kueue's flavor assigner simulates preemption per " +
				"flavor and ranks a flavor without candidates below the others (isPreferred, noPreemptionCandidates)",
		},
		{
			// scheduler_test "prefer reclamation over cq priority based preemption".
			name: "a flavor needing only reclamation is preferred to one needing priority preemption",
			queues: []*core.ClusterQueue{
				fungible(preempts(cq("other-alpha", "other", coretest.Quotas("on-demand", map[string]int64{"gpu": 10}),
					coretest.Quotas("spot", map[string]int64{"gpu": 10})), core.PreemptLowerPriority, core.PreemptLowerPriority), true, false),
				cq("other-beta", "other", coretest.Quotas("on-demand", map[string]int64{"gpu": 0}), coretest.Quotas("spot", map[string]int64{"gpu": 0})),
			},
			running: []*core.Workload{running(coretest.Workload("a1", 50, 1, 1, map[string]int64{"gpu": 5}), "other-alpha", "on-demand"),
				running(coretest.Workload("b1", 50, 2, 1, map[string]int64{"gpu": 5}), "other-beta", "spot")},
			pending:     in("other-alpha", coretest.Workload("preemptor", 100, 9, 1, map[string]int64{"gpu": 6})),
			wantVictims: []string{"b1:" + string(InCohortReclamation)},
			knownGap: "Muster evicts a1 in on-demand: pickFlavor (assign.go) ranks every flavor that fits by preempting " +
				"the same and takes the first; Kueue's flavor assigner ranks reclaiming borrowed quota above " +
				"priority-based preemption in the own queue (preemptionMode reclaim > preempt)",
		},
	}
}
