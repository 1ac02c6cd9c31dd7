package core

import (
	"time"

	"github.com/musterhq/muster/internal/topology"
)

// Snapshot is a consistent copy of the cache for one scheduling cycle: the
// cohort forest with every node's quota and usage. The cycle adds the usage
// of what it admits, so later decisions in the same cycle see it.
type Snapshot struct {
	queues  map[string]*QueueSnapshot
	cohorts map[string]*node
	flavors map[string]*Flavor
	// lqStop holds the stop policy of stopped LocalQueues (namespace/name).
	lqStop map[string]StopPolicy
	// fairSharing orders admissions and preemptions by DRF shares.
	fairSharing bool
	// decay, when set, orders the fair-sharing tournament by decayed usage.
	decay *usageDecay
	// notReady lists admitted workloads not ready yet, when admission is
	// blocked until they are.
	notReady []string
	// now is the cycle's time and preemptionDelay how long a workload that
	// fits only by preempting holds its room first (see SetNow).
	now             time.Time
	preemptionDelay time.Duration
	// nodeFailureGrace is how long a node must stay NotReady before the
	// placements on it are repaired; repairWait, after the cycle, is how
	// long until the next NotReady node's grace ends (see RepairWait).
	nodeFailureGrace time.Duration
	repairWait       time.Duration
	// classMinRuntime is the minimum runtime of priority classes.
	classMinRuntime map[string]time.Duration
	// lqScores is the weighted usage of the LocalQueues of queues with
	// admission fair sharing, raised as the cycle admits; lqWeights and
	// lqDecay are what raising it needs.
	lqScores  map[string]float64
	lqWeights map[string]int64
	lqDecay   *usageDecay
	// topologies holds each topology's free capacity for the cycle; a
	// placement admitted in the cycle is applied to it.
	topologies map[string]*topology.Snapshot
	// nodes is the node catalogue placement filters by, and nodeFits
	// memoizes, per placement class, which nodes qualify.
	nodes    map[string]*Node
	nodeFits map[string]*topology.NodeMask
	// broken maps admitted workloads to the nodes of their placements
	// that failed (gone, not Ready, tainted NoExecute); a NotReady one
	// counts once its grace period is over (see dueFailures).
	broken map[string][]string
	// footprints is what each admitted workload held one by one takes in
	// each topology (see snapshotFootprints).
	footprints map[string]map[string][]*topology.Assignment
	// admitLimit, when positive, is how many new admissions the cycle may
	// decide (see LimitAdmissions).
	admitLimit int
}

// SetNow gives the cycle its time: the core reads no clock. Without it,
// workloads preempt as soon as they need to.
func (s *Snapshot) SetNow(t time.Time) { s.now = t }

// LimitAdmissions stops the cycle once it has decided n new admissions
// (n <= 0: no limit). The workloads it has not reached stay pending,
// undecided: neither parked nor given a reason. A controller whose writes
// are rate limited admits only what it can write now, so a higher-priority
// workload that arrives meanwhile is decided on next, not queued behind
// admissions decided long before they could be written.
func (s *Snapshot) LimitAdmissions(n int) { s.admitLimit = n }

// admissionsLeft reports whether the cycle may decide another admission,
// given those it has decided.
func (s *Snapshot) admissionsLeft(admitted int) bool {
	return s.admitLimit <= 0 || admitted < s.admitLimit
}

// QueueSnapshot is a ClusterQueue, its admitted workloads and its place in
// the cohort tree at the start of a cycle.
type QueueSnapshot struct {
	*ClusterQueue
	node *node
	// Workloads holds the admitted workloads (including evicting ones).
	Workloads map[string]*Workload
	// Inactive says why the queue admits nothing, or is empty;
	// InactiveBecause is its cause.
	Inactive        string
	InactiveBecause Inactivity
}

// Usage is the queue's usage per flavor-resource.
func (q *QueueSnapshot) Usage() Usage { return q.node.usage }

// Queue returns a ClusterQueue of the snapshot, or nil.
func (s *Snapshot) Queue(name string) *QueueSnapshot { return s.queues[name] }

// Flavor returns a flavor of the snapshot, or nil.
func (s *Snapshot) Flavor(name string) *Flavor { return s.flavors[name] }

// Available is how much more of a flavor-resource the queue can use,
// borrowing from its cohort within the limits.
func (q *QueueSnapshot) Available(fr FlavorResource) int64 { return q.node.available(fr) }

// Nominal is the queue's own quota of a flavor-resource.
func (q *QueueSnapshot) Nominal(fr FlavorResource) int64 { return q.node.own[fr].Nominal }

// AddUsage records usage admitted during the cycle, up the cohort tree.
func (q *QueueSnapshot) AddUsage(u Usage) {
	for fr, v := range u {
		q.node.addUsage(fr, v)
	}
}

// RemoveUsage undoes AddUsage.
func (q *QueueSnapshot) RemoveUsage(u Usage) {
	for fr, v := range u {
		q.node.addUsage(fr, -v)
	}
}

// Borrowed is how much of each flavor-resource the queue uses beyond its
// nominal quota.
func (q *QueueSnapshot) Borrowed() Usage {
	out := Usage{}
	for fr, v := range q.node.usage {
		if b := v - q.node.subtree[fr]; b > 0 {
			out[fr] = b
		}
	}
	return out
}
