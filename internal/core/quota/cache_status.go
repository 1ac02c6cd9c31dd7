package quota

import (
	"fmt"
	"slices"
	"strings"

	"github.com/musterhq/muster/internal/core"
)

// QueueStatus is what a ClusterQueue's status reports.
type QueueStatus struct {
	Exists bool
	// Borrowed is the usage beyond the queue's nominal quota.
	Borrowed core.Usage
	// WeightedShare is the queue's DRF share in thousandths (fair sharing).
	WeightedShare int64
	// CohortShare is the share of the queue's cohort within its parent
	// (fair sharing), if it has a cohort.
	CohortShare    int64
	HasCohortShare bool
	// Inactive says why the queue admits nothing, or is empty;
	// InactiveBecause is its cause.
	Inactive        string
	InactiveBecause Inactivity
	MissingFlavors  []string
	Reserving       int
	Usage           core.Usage
	// ByLocalQueue counts reserving workloads and usage per LocalQueue key
	// (namespace/name).
	ByLocalQueue map[string]*LocalQueueUsage
}

// LocalQueueUsage is what one LocalQueue's workloads hold.
type LocalQueueUsage struct {
	Reserving int
	Usage     core.Usage
}

// ClusterQueueStatus reports a ClusterQueue's state and usage.
//
// It snapshots the queue's cohort tree only: a thousand ClusterQueues
// refreshing their status once a second each would otherwise snapshot all
// thousand a thousand times a second.
func (c *Cache) ClusterQueueStatus(name string) QueueStatus {
	c.mu.RLock()
	defer c.mu.RUnlock()
	snap := c.quotaSnapshot(c.treeOf(name))
	cq, ok := c.queues[name]
	st := QueueStatus{Exists: ok, Usage: c.usage[name].Clone(), ByLocalQueue: map[string]*LocalQueueUsage{}}
	if ok {
		st.MissingFlavors = c.missingFlavors(cq)
		if q := snap.Queue(name); q != nil {
			st.Inactive, st.InactiveBecause = q.Inactive, q.InactiveBecause
			st.Borrowed = q.Borrowed()
			st.WeightedShare = q.Tree.Share()
		}
		if n, ok := snap.Cohorts[cq.Cohort]; ok && cq.Cohort != "" {
			st.CohortShare, st.HasCohortShare = n.Share(), true
		}
	}
	for _, cw := range c.byQueue[name] {
		st.Reserving++
		lq := cw.wl.Namespace + "/" + cw.wl.Queue
		if st.ByLocalQueue[lq] == nil {
			st.ByLocalQueue[lq] = &LocalQueueUsage{Usage: core.Usage{}}
		}
		st.ByLocalQueue[lq].Reserving++
		st.ByLocalQueue[lq].Usage.Add(cw.usage)
	}
	return st
}

func (c *Cache) missingFlavors(cq *core.ClusterQueue) []string {
	var missing []string
	for _, f := range cq.FlavorNames() {
		if _, ok := c.flavors[f]; !ok {
			missing = append(missing, f)
		}
	}
	return missing
}

// Inactivity is why a ClusterQueue admits nothing.
type Inactivity int

const (
	// Active: it admits.
	Active Inactivity = iota
	// FlavorsMissing: a flavor it names does not exist.
	FlavorsMissing
	// Stopped: its stopPolicy holds it (or it is being deleted).
	Stopped
	// CohortCycle: its cohort tree has a cycle of parents, so what it may
	// borrow is undefined.
	CohortCycle
	// TopologyMissing: a flavor it names has a topology that does not
	// exist, so nothing can be placed on it (Kueue's TopologyNotFound).
	TopologyMissing
	// GangMissing: the API of its gang scheduler is not served, so the
	// jobs it admitted could not be handed over.
	GangMissing
	// CheckMissing: an admission check it names does not exist;
	// CheckInactive: one is not Active (its controller does not answer).
	CheckMissing
	CheckInactive
)

// inactiveReason says why a queue admits nothing, from its own state (its
// cohort tree is looked at when the snapshot is linked).
func (c *Cache) inactiveReason(cq *core.ClusterQueue) (Inactivity, string) {
	if missing := c.missingFlavors(cq); len(missing) > 0 {
		return FlavorsMissing, fmt.Sprintf("ResourceFlavor %s not found", strings.Join(missing, ", "))
	}
	if missing := c.missingTopologies(cq); len(missing) > 0 {
		return TopologyMissing, fmt.Sprintf("Topology %s not found", strings.Join(missing, ", "))
	}
	if detail, missing := c.gangMissing[cq.Gang]; missing && cq.Gang != "" {
		return GangMissing, detail
	}
	if why, detail := c.checksInactive(cq); why != Active {
		return why, detail
	}
	if cq.Stop != core.Running {
		return Stopped, "ClusterQueue is stopped"
	}
	return Active, ""
}

// GangsInUse are the gang schedulers the queues hand their jobs to.
func (c *Cache) GangsInUse() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for _, q := range c.queues {
		if q.Gang != "" && !slices.Contains(out, q.Gang) {
			out = append(out, q.Gang)
		}
	}
	slices.Sort(out)
	return out
}

// SetGangServed records whether a gang scheduler's API is served (detail
// says what is missing when not) and returns the queues that use it, whose
// status changes.
func (c *Cache) SetGangServed(gang string, served bool, detail string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	before, wasMissing := c.gangMissing[gang]
	if served {
		delete(c.gangMissing, gang)
	} else {
		c.gangMissing[gang] = detail
	}
	if changed := wasMissing == served || before != detail && !served; !changed {
		return nil
	}
	var out []string
	for name, q := range c.queues {
		if q.Gang == gang {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// missingTopologies lists the topologies the queue's flavors name that
// the cache does not know.
func (c *Cache) missingTopologies(cq *core.ClusterQueue) []string {
	var out []string
	for _, name := range cq.FlavorNames() {
		f := c.flavors[name]
		if f == nil || f.Topology == "" || slices.Contains(out, f.Topology) {
			continue
		}
		if _, ok := c.capacity.trees[f.Topology]; !ok {
			out = append(out, f.Topology)
		}
	}
	slices.Sort(out)
	return out
}

// cohortCycleMessage tells the users of a queue whose cohort tree has a
// cycle of parents which Cohorts form it and what to change.
func (c *Cache) cohortCycleMessage(cohort string) string {
	chain := c.ancestors(cohort)
	last := chain[len(chain)-1]
	var loop []string
	if co, ok := c.cohorts[last]; ok && co.Parent != "" {
		start := slices.Index(chain, co.Parent)
		loop = append(chain[max(start, 0):len(chain):len(chain)], co.Parent)
	}
	return fmt.Sprintf("its cohort %s is in a tree with a cycle of Cohort parents (%s); "+
		"it admits nothing until the spec.parent of one of these Cohorts is changed to break the cycle",
		cohort, strings.Join(loop, " -> "))
}

// treeOf is the queues of a ClusterQueue's cohort tree (itself alone
// outside a cohort). The caller holds the lock.
func (c *Cache) treeOf(name string) map[string]*core.ClusterQueue {
	cq, ok := c.queues[name]
	if !ok {
		return nil
	}
	if cq.Cohort == "" {
		return map[string]*core.ClusterQueue{name: cq}
	}
	return c.queuesOfTree(c.rootOf(cq.Cohort))
}

// queuesOfTree is the ClusterQueues of the cohort tree with root.
func (c *Cache) queuesOfTree(root string) map[string]*core.ClusterQueue {
	out := map[string]*core.ClusterQueue{}
	for _, q := range c.treeQueues(root) {
		out[q] = c.queues[q]
	}
	return out
}

// Admitted returns the workloads holding quota in a ClusterQueue (admitted
// or assumed), the most recently admitted first, at most limit of them.
func (c *Cache) Admitted(clusterQueue string, limit int) []*core.Workload {
	c.mu.RLock()
	out := make([]*core.Workload, 0, len(c.byQueue[clusterQueue]))
	for _, cw := range c.byQueue[clusterQueue] {
		out = append(out, cw.wl)
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b *core.Workload) int {
		if c := b.AdmittedAt.Compare(a.AdmittedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out[:min(limit, len(out))]
}
