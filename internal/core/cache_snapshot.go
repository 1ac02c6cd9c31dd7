package core

import (
	"maps"
	"slices"
	"sort"

	"github.com/musterhq/muster/internal/topology"
)

// Snapshot copies what one scheduling cycle needs, so the cycle decides
// without holding the lock while events keep arriving.
func (c *Cache) Snapshot() *Snapshot {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := c.quotaSnapshot(c.queues)
	if c.blockAdmission {
		s.notReady = c.notReady()
	}
	c.copyWorkloads(s)
	c.snapshotLocalQueues(s)
	c.snapshotCapacity(s)
	return s
}

// quotaSnapshot is the quota half of a snapshot, of the given queues and
// every cohort: their nodes, activity and usage. The caller holds the lock.
func (c *Cache) quotaSnapshot(queues map[string]*ClusterQueue) *Snapshot {
	s := &Snapshot{
		queues:      make(map[string]*QueueSnapshot, len(queues)),
		cohorts:     map[string]*node{},
		flavors:     make(map[string]*Flavor, len(c.flavors)),
		lqStop:      make(map[string]StopPolicy, len(c.lqStop)),
		fairSharing: c.fairSharing,

		preemptionDelay:  c.preemptionDelay,
		nodeFailureGrace: c.nodeFailureGrace,
		classMinRuntime:  maps.Clone(c.classMinRuntime),
	}
	for name, f := range c.flavors {
		s.flavors[name] = f
	}
	for k, v := range c.lqStop {
		s.lqStop[k] = v
	}
	for name, cq := range queues {
		leaf := newNode(name, cq.ResourceGroups, cq.Weight)
		q := &QueueSnapshot{ClusterQueue: cq, node: leaf, Workloads: map[string]*Workload{}}
		q.InactiveBecause, q.Inactive = c.inactiveReason(cq)
		leaf.queue = q
		s.queues[name] = q
		if cq.Cohort != "" {
			attach(leaf, c.cohortNode(s, cq.Cohort))
		}
	}
	for name := range c.cohorts {
		c.cohortNode(s, name)
	}
	cycles := c.linkCohorts(s)
	for _, n := range s.cohorts {
		if n.parent == nil {
			n.computeSubtree()
		}
	}
	for _, q := range s.queues {
		if q.node.parent == nil {
			q.node.computeSubtree()
		}
		if q.InactiveBecause == Active && q.Cohort != "" && cycles[q.node.root().name] {
			q.InactiveBecause, q.Inactive = CohortCycle, c.cohortCycleMessage(q.Cohort)
		}
	}
	for name, q := range s.queues {
		q.AddUsage(c.usage[name])
	}
	c.decayNodes(s)
	return s
}

// snapshotCapacity gives the snapshot each topology's free capacity and
// the placements to repair.
func (c *Cache) snapshotCapacity(s *Snapshot) {
	if len(c.capacity.trees) == 0 {
		return
	}
	s.topologies = make(map[string]*topology.Snapshot, len(c.capacity.trees))
	for name, t := range c.capacity.trees {
		s.topologies[name] = t.Snapshot()
	}
	s.nodes = c.frozenNodes()
	s.nodeFits = map[string]*topology.NodeMask{}
	s.broken = c.brokenPlacements()
	for key := range s.broken {
		if cw, ok := c.workloads[key]; ok {
			if q := s.queues[cw.wl.Admission.ClusterQueue]; q != nil && q.Workloads[key] == nil {
				q.Workloads[key] = cw.wl
			}
		}
	}
	c.snapshotFootprints(s)
}

// snapshotFootprints records, for the admitted workloads the snapshot
// holds one by one (the candidates of preemption), what each takes in each
// tree: its pods as one-pod assignments on their nodes, and its unfilled
// room. The slices are never changed in place, so they are shared.
func (c *Cache) snapshotFootprints(s *Snapshot) {
	for _, q := range s.queues {
		for key := range q.Workloads {
			var pods []*topology.Assignment
			for pk := range c.capacity.podsOf[key] {
				pods = append(pods, c.capacity.pods[pk].footprint())
			}
			unfilled := c.capacity.unfilled[key]
			if len(pods) == 0 && len(unfilled) == 0 {
				continue
			}
			if s.footprints == nil {
				s.footprints = map[string]map[string][]*topology.Assignment{}
			}
			byTree := make(map[string][]*topology.Assignment, len(c.capacity.trees))
			for name := range c.capacity.trees {
				if as := append(slices.Clip(pods), unfilled[name]...); len(as) > 0 {
					byTree[name] = as
				}
			}
			s.footprints[key] = byTree
		}
	}
}

// copyWorkloads gives the snapshot the admitted workloads of the queues
// whose cycle may need them one by one: cohort trees where some queue may
// preempt or holds room for starving workloads (when it will be free
// depends on who runs until when), and draining queues. Elsewhere the per-queue totals suffice, so
// a cycle's cost does not grow with everything admitted.
func (c *Cache) copyWorkloads(s *Snapshot) {
	lqDrain := false
	for _, p := range s.lqStop {
		lqDrain = lqDrain || p == HoldAndDrain
	}
	needed := map[*node]bool{}
	for _, q := range s.queues {
		if q.Preemption.Preempts() || q.StarvationAfter > 0 || q.Stop == HoldAndDrain || lqDrain {
			needed[q.node.root()] = true
		}
	}
	for root := range needed {
		for _, q := range root.leaves() {
			for key, cw := range c.byQueue[q.Name] {
				q.Workloads[key] = cw.wl
			}
		}
	}
}

// notReady lists the admitted workloads whose pods are not all ready yet
// (evicting ones excluded: they are going away).
func (c *Cache) notReady() []string {
	var keys []string
	for key, cw := range c.workloads {
		if !cw.wl.PodsReady && !cw.wl.Evicting {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys
}

// cohortNode returns the snapshot's node of a cohort, creating it (with the
// Cohort object's quota, if there is one).
func (c *Cache) cohortNode(s *Snapshot, name string) *node {
	if n, ok := s.cohorts[name]; ok {
		return n
	}
	var n *node
	if co, ok := c.cohorts[name]; ok {
		n = newNode(name, co.ResourceGroups, co.Weight)
	} else {
		n = newNode(name, nil, 1000)
	}
	s.cohorts[name] = n
	return n
}

// linkCohorts attaches cohorts to their parents. A parent link that would
// close a cycle is cut; it returns the roots whose trees had one.
func (c *Cache) linkCohorts(s *Snapshot) map[string]bool {
	cycles := map[string]bool{}
	names := make([]string, 0, len(c.cohorts))
	for name := range c.cohorts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		co := c.cohorts[name]
		if co.Parent == "" {
			continue
		}
		child, parent := s.cohorts[name], c.cohortNode(s, co.Parent)
		if parent.root() == child {
			cycles[child.name] = true
			continue
		}
		attach(child, parent)
	}
	return cycles
}

func attach(child, parent *node) {
	child.parent = parent
	parent.children = append(parent.children, child)
}
