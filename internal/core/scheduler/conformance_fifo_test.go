package scheduler

import (
	"github.com/musterhq/muster/internal/core"
)

// Conformance: queueing strategies — StrictFIFO blocks behind its head,
// BestEffortFIFO lets others pass; heads are ordered by priority, then
// creation time.

func fifoCases() []conformanceCase {
	queue := func(strict bool) *core.ClusterQueue {
		q := cq("q", "", cpus("default", 4))
		if strict {
			strictFIFO(q)
		}
		return q
	}
	half := []*core.Workload{running(job("r", 0, 0, 2), "q", "default")}
	in := func(ws ...*core.Workload) map[string][]*core.Workload { return map[string][]*core.Workload{"q": ws} }
	return []conformanceCase{
		{
			// cluster_queue.md "Queueing strategy": StrictFIFO — an older workload that can't be
			// admitted blocks newer ones, even if they fit.
			name:   "StrictFIFO: a head that does not fit blocks a smaller workload behind it",
			queues: []*core.ClusterQueue{queue(true)}, running: half,
			pending: in(job("big", 0, 1, 4), job("small", 0, 2, 2)),
		},
		{
			// cluster_queue.md "Queueing strategy": BestEffortFIFO — older workloads that can't be
			// admitted don't block newer ones that fit.
			name:   "BestEffortFIFO: a smaller workload passes a head that does not fit",
			queues: []*core.ClusterQueue{queue(false)}, running: half,
			pending: in(job("big", 0, 1, 4), job("small", 0, 2, 2)), wantAdmitted: []string{"small"},
		},
		{
			// cluster_queue.md "Queueing strategy": BestEffortFIFO; scheduler_test "not enough resources"
			// (a workload above the quota is inadmissible).
			name:    "BestEffortFIFO: a workload that can never fit does not hold the queue",
			queues:  []*core.ClusterQueue{queue(false)},
			pending: in(job("huge", 0, 1, 10), job("small", 0, 2, 1)), wantAdmitted: []string{"small"},
		},
		{
			// cluster_queue.md "Queueing strategy": workloads are ordered by priority first.
			name:    "a higher-priority workload is admitted before an older one",
			queues:  []*core.ClusterQueue{queue(false)},
			pending: in(job("old-low", 0, 1, 4), job("new-high", 5, 9, 4)), wantAdmitted: []string{"new-high"},
		},
		{
			// cluster_queue.md "Queueing strategy": then by creation time.
			name:    "at equal priority the older workload is admitted first",
			queues:  []*core.ClusterQueue{queue(false)},
			pending: in(job("new", 0, 9, 4), job("old", 0, 1, 4)), wantAdmitted: []string{"old"},
		},
		{
			// cluster_queue.md "Queueing strategy": under StrictFIFO the head is the highest priority,
			// and it blocks an older lower-priority workload that would fit.
			name:   "StrictFIFO: a higher-priority head that does not fit blocks older workloads",
			queues: []*core.ClusterQueue{queue(true)}, running: half,
			pending: in(job("low-old", 0, 1, 2), job("high-new", 5, 9, 4)),
		},
		{
			// cluster_queue.md "Queueing strategy" is per ClusterQueue.
			name: "StrictFIFO blocks only its own ClusterQueue",
			queues: []*core.ClusterQueue{queue(true),
				cq("other", "", cpus("default", 4))},
			running:      half,
			pending:      map[string][]*core.Workload{"q": {job("big", 0, 1, 4), job("small", 0, 2, 2)}, "other": {job("free", 0, 3, 2)}},
			wantAdmitted: []string{"free"},
		},
		{
			// cluster_queue.md StrictFIFO: the head keeps the queue while it waits for its victims.
			name:    "StrictFIFO: a head that is preempting keeps the queue blocked",
			queues:  []*core.ClusterQueue{preempts(strictFIFO(cq("q", "", cpus("default", 6))), core.PreemptLowerPriority, core.PreemptNever)},
			running: []*core.Workload{running(job("low", -1, 0, 4), "q", "default")},
			pending: in(job("high", 5, 1, 4), job("small", 0, 2, 2)), wantVictims: []string{"low"},
		},
		{
			// Kueue pops one head per ClusterQueue per cycle, and a preemptor stays the head of its
			// BestEffortFIFO queue until its victims are gone.
			name:    "BestEffortFIFO: lower-priority workloads do not take the room a preemptor makes",
			queues:  []*core.ClusterQueue{preempts(cq("q", "", cpus("default", 6)), core.PreemptLowerPriority, core.PreemptNever)},
			running: []*core.Workload{running(job("low", -1, 0, 4), "q", "default")},
			pending: in(job("high", 5, 1, 4), job("small", 0, 2, 2)), wantVictims: []string{"low"},
		},
		{
			// Kueue's scheduler takes one head per ClusterQueue per cycle (scheduler.go schedule).
			name:         "every workload of a queue that fits is admitted in one cycle",
			queues:       []*core.ClusterQueue{queue(false)},
			pending:      in(job("w1", 0, 1, 1), job("w2", 0, 2, 1), job("w3", 0, 3, 2)),
			wantAdmitted: []string{"w1", "w2", "w3"},
			deliberate: "Muster admits every pending workload that fits in one cycle; Kueue admits one head per " +
				"ClusterQueue per cycle and the others in the cycles that follow, reaching the same admissions",
		},
		{
			// cluster_queue.md "Queueing strategy" with cohorts: a StrictFIFO queue's blocked head does
			// not stop another queue of the cohort from borrowing (heads are per ClusterQueue).
			name: "a blocked StrictFIFO queue does not stop another queue of its cohort",
			queues: []*core.ClusterQueue{strictFIFO(cq("strict", "c", cpus("default", 2))),
				cq("other", "c", cpus("default", 2))},
			pending: map[string][]*core.Workload{"strict": {job("too-big", 0, 1, 5), job("fits", 0, 2, 1)},
				"other": {job("borrower", 0, 3, 3)}},
			wantAdmitted: []string{"borrower"},
		},
	}
}
