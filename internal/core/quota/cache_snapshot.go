package quota

import (
	"maps"
	"slices"
	"sort"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/topology"
)

// SnapshotOptions says what a snapshot copies beyond quota, usage,
// workloads and capacity, for a scheduler whose policy needs it.
type SnapshotOptions struct {
	// NotReady lists the admitted workloads whose pods are not all ready,
	// for a scheduler that admits nothing until they are: a scan and sort
	// of every admitted workload, paid only when asked for.
	NotReady bool
}

// Snapshot copies what one scheduling cycle needs, so the cycle decides
// without holding the lock while events keep arriving.
func (c *Cache) Snapshot() *Snapshot { return c.SnapshotWith(SnapshotOptions{}) }

// SnapshotWith is Snapshot with the copies opts asks for.
func (c *Cache) SnapshotWith(opts SnapshotOptions) *Snapshot {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := c.quotaSnapshot(c.queues)
	if opts.NotReady {
		s.NotReady = c.notReady()
	}
	c.copyWorkloads(s)
	c.snapshotLocalQueues(s)
	c.snapshotCapacity(s)
	return s
}

// quotaSnapshot is the quota half of a snapshot, of the given queues and
// every cohort: their nodes, activity and usage. The caller holds the lock.
func (c *Cache) quotaSnapshot(queues map[string]*core.ClusterQueue) *Snapshot {
	s := &Snapshot{
		Queues:             make(map[string]*QueueSnapshot, len(queues)),
		Cohorts:            map[string]*TreeNode{},
		Flavors:            make(map[string]*core.Flavor, len(c.flavors)),
		StoppedLocalQueues: make(map[string]core.StopPolicy, len(c.lqStop)),

		ClassMinRuntime: maps.Clone(c.classMinRuntime),
	}
	for name, f := range c.flavors {
		s.Flavors[name] = f
	}
	for k, v := range c.lqStop {
		s.StoppedLocalQueues[k] = v
	}
	for name, cq := range queues {
		leaf := newNode(name, cq.ResourceGroups, cq.Weight)
		q := &QueueSnapshot{ClusterQueue: cq, Tree: leaf, Workloads: map[string]*core.Workload{}}
		q.InactiveBecause, q.Inactive = c.inactiveReason(cq)
		leaf.Queue = q
		s.Queues[name] = q
		if cq.Cohort != "" {
			attach(leaf, c.cohortNode(s, cq.Cohort))
		}
	}
	for name := range c.cohorts {
		c.cohortNode(s, name)
	}
	cycles := c.linkCohorts(s)
	for _, n := range s.Cohorts {
		if n.Parent == nil {
			n.computeSubtree()
		}
	}
	for _, q := range s.Queues {
		if q.Tree.Parent == nil {
			q.Tree.computeSubtree()
		}
		if q.InactiveBecause == Active && q.Cohort != "" && cycles[q.Tree.Root().Name] {
			q.InactiveBecause, q.Inactive = CohortCycle, c.cohortCycleMessage(q.Cohort)
		}
	}
	for name, q := range s.Queues {
		q.AddUsage(c.usage[name])
	}
	s.DelayingChecks = c.delayingChecks()
	s.Unplaced = slices.Sorted(maps.Keys(c.unplaced))
	for _, key := range s.Unplaced {
		c.snapshotWorkload(s, key)
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
	s.Topologies = make(map[string]*topology.Snapshot, len(c.capacity.trees))
	for name, t := range c.capacity.trees {
		s.Topologies[name] = t.Snapshot()
	}
	s.Nodes = c.frozenNodes()
	s.NodeFits = map[string]*topology.NodeMask{}
	s.Broken = c.brokenPlacements()
	for key := range s.Broken {
		c.snapshotWorkload(s, key)
	}
	c.snapshotFootprints(s)
}

// snapshotWorkload puts an admitted workload in its queue's snapshot.
func (c *Cache) snapshotWorkload(s *Snapshot, key string) {
	if cw, ok := c.workloads[key]; ok {
		if q := s.Queues[cw.wl.Admission.ClusterQueue]; q != nil && q.Workloads[key] == nil {
			q.Workloads[key] = cw.wl
		}
	}
}

// snapshotFootprints records, for the admitted workloads the snapshot
// holds one by one (the candidates of preemption), what each takes in each
// tree: its pods as one-pod assignments on their nodes, and its unfilled
// room. The slices are never changed in place, so they are shared.
func (c *Cache) snapshotFootprints(s *Snapshot) {
	for _, q := range s.Queues {
		for key := range q.Workloads {
			var pods []*topology.Assignment
			for pk := range c.capacity.podsOf[key] {
				pods = append(pods, c.capacity.pods[pk].Footprint())
			}
			unfilled := c.capacity.unfilled[key]
			if len(pods) == 0 && len(unfilled) == 0 {
				continue
			}
			if s.Footprints == nil {
				s.Footprints = map[string]map[string][]*topology.Assignment{}
			}
			byTree := make(map[string][]*topology.Assignment, len(c.capacity.trees))
			for name := range c.capacity.trees {
				if as := append(slices.Clip(pods), unfilled[name]...); len(as) > 0 {
					byTree[name] = as
				}
			}
			s.Footprints[key] = byTree
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
	for _, p := range s.StoppedLocalQueues {
		lqDrain = lqDrain || p == core.HoldAndDrain
	}
	needed := map[*TreeNode]bool{}
	for _, q := range s.Queues {
		if q.Preemption.Preempts() || q.StarvationAfter > 0 || q.Stop == core.HoldAndDrain || lqDrain {
			needed[q.Tree.Root()] = true
		}
	}
	for root := range needed {
		for _, q := range root.Leaves() {
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
func (c *Cache) cohortNode(s *Snapshot, name string) *TreeNode {
	if n, ok := s.Cohorts[name]; ok {
		return n
	}
	var n *TreeNode
	if co, ok := c.cohorts[name]; ok {
		n = newNode(name, co.ResourceGroups, co.Weight)
	} else {
		n = newNode(name, nil, 1000)
	}
	s.Cohorts[name] = n
	return n
}

// linkCohorts attaches cohorts to their parents. A parent link that would
// close a cycle is cut; it returns the roots whose trees had one.
func (c *Cache) linkCohorts(s *Snapshot) map[string]bool {
	cycles := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(c.cohorts)) {
		co := c.cohorts[name]
		if co.Parent == "" {
			continue
		}
		child, parent := s.Cohorts[name], c.cohortNode(s, co.Parent)
		if parent.Root() == child {
			cycles[child.Name] = true
			continue
		}
		attach(child, parent)
	}
	return cycles
}

func attach(child, parent *TreeNode) {
	child.Parent = parent
	parent.Children = append(parent.Children, child)
}
