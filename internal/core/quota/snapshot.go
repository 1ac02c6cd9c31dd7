package quota

import (
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/topology"
)

// Snapshot is a consistent copy of the cache for one scheduling cycle: the
// cohort forest with every node's quota and usage. The cycle adds the usage
// of what it admits, so later decisions in the same cycle see it.
type Snapshot struct {
	Queues  map[string]*QueueSnapshot
	Cohorts map[string]*TreeNode
	Flavors map[string]*core.Flavor
	// StoppedLocalQueues holds the stop policy of stopped LocalQueues
	// (namespace/name).
	StoppedLocalQueues map[string]core.StopPolicy
	// decay, when set, orders the fair-sharing tournament by decayed usage.
	decay *usageDecay
	// NotReady lists the admitted workloads whose pods are not all ready,
	// by key, when the snapshot was asked for them (SnapshotOptions).
	NotReady []string
	// ClassMinRuntime is the minimum runtime of priority classes.
	ClassMinRuntime map[string]time.Duration
	// lqScores is the weighted usage of the LocalQueues of queues with
	// admission fair sharing, raised as the cycle admits; lqWeights and
	// lqDecay are what raising it needs.
	lqScores  map[string]float64
	lqWeights map[string]int64
	lqDecay   *usageDecay
	// Topologies holds each topology's free capacity for the cycle; a
	// placement admitted in the cycle is applied to it.
	Topologies map[string]*topology.Snapshot
	// Nodes is the node catalogue placement filters by, and NodeFits
	// memoizes, per placement class, which nodes qualify.
	Nodes    map[string]*core.Node
	NodeFits map[string]*topology.NodeMask
	// Broken maps admitted workloads to the nodes of their placements
	// that failed (gone, not Ready, tainted NoExecute); whether a NotReady
	// one counts yet is the scheduler's node failure grace.
	Broken map[string][]string
	// DelayingChecks are the admission checks that provision the nodes of
	// their flavors: pod sets on those flavors are placed only once the
	// check is Ready (Unplaced).
	DelayingChecks map[string]bool
	// Unplaced are the workloads holding quota whose checks are all Ready
	// and whose delayed pod sets are to be placed, in key order.
	Unplaced []string
	// Footprints is what each admitted workload held one by one takes in
	// each topology (see snapshotFootprints).
	Footprints map[string]map[string][]*topology.Assignment
}

// QueueSnapshot is a ClusterQueue, its admitted workloads and its place in
// the cohort tree at the start of a cycle.
type QueueSnapshot struct {
	*core.ClusterQueue
	Tree *TreeNode
	// Workloads holds the admitted workloads (including evicting ones).
	Workloads map[string]*core.Workload
	// Inactive says why the queue admits nothing, or is empty;
	// InactiveBecause is its cause.
	Inactive        string
	InactiveBecause Inactivity
}

// Usage is the queue's usage per flavor-resource.
func (q *QueueSnapshot) Usage() core.Usage { return q.Tree.Usage }

// PlacementDelayed reports whether the queue's pod sets on a flavor wait
// for nodes an admission check provisions.
func (s *Snapshot) PlacementDelayed(q *QueueSnapshot, flavor string) bool {
	for _, r := range q.Checks {
		if s.DelayingChecks[r.Name] && r.AppliesTo(flavor) {
			return true
		}
	}
	return false
}

// Queue returns a ClusterQueue of the snapshot, or nil.
func (s *Snapshot) Queue(name string) *QueueSnapshot { return s.Queues[name] }

// Flavor returns a flavor of the snapshot, or nil.
func (s *Snapshot) Flavor(name string) *core.Flavor { return s.Flavors[name] }

// Available is how much more of a flavor-resource the queue can use,
// borrowing from its cohort within the limits.
func (q *QueueSnapshot) Available(fr core.FlavorResource) int64 { return q.Tree.available(fr) }

// Nominal is the queue's own quota of a flavor-resource.
func (q *QueueSnapshot) Nominal(fr core.FlavorResource) int64 { return q.Tree.Own[fr].Nominal }

// AddUsage records usage admitted during the cycle, up the cohort tree.
func (q *QueueSnapshot) AddUsage(u core.Usage) {
	for fr, v := range u {
		q.Tree.addUsage(fr, v)
	}
}

// RemoveUsage undoes AddUsage.
func (q *QueueSnapshot) RemoveUsage(u core.Usage) {
	for fr, v := range u {
		q.Tree.addUsage(fr, -v)
	}
}

// Borrowed is how much of each flavor-resource the queue uses beyond its
// nominal quota.
func (q *QueueSnapshot) Borrowed() core.Usage {
	out := core.Usage{}
	for fr, v := range q.Tree.Usage {
		if b := v - q.Tree.Subtree[fr]; b > 0 {
			out[fr] = b
		}
	}
	return out
}
