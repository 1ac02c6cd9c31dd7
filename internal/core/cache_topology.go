package core

import (
	"slices"
	"sync"

	"github.com/musterhq/muster/internal/topology"
)

// capacity is the node side of the cache: the topologies, the nodes and
// the pods bound to them. Every topology tree holds every node that
// carries its level labels, with free capacity = allocatable − the pods
// bound there − the placements of admitted workloads. A pod is counted
// once per tree: through its workload's placement when the workload is
// admitted with one in that tree, else on its own. The invariant "a pod's
// usage is in tree t exactly when counted(pod, t)" is kept by every event.
type capacity struct {
	trees map[string]*topology.Tree
	nodes map[string]*Node
	// frozen is a copy of nodes for snapshots, nil after a node event;
	// frozenMu guards its lazy rebuild, which runs under the cache's read
	// lock.
	frozenMu sync.Mutex
	frozen   map[string]*Node
	pods     map[string]*Pod
	// podsOf indexes the pods by workload key.
	podsOf map[string]map[string]bool
	// placedOn indexes admitted workloads with a placement by node.
	placedOn map[string]map[string]bool
}

func newCapacity() *capacity {
	return &capacity{trees: map[string]*topology.Tree{}, nodes: map[string]*Node{}, pods: map[string]*Pod{},
		podsOf: map[string]map[string]bool{}, placedOn: map[string]map[string]bool{}}
}

// UpsertTopology adds a topology or changes its levels. A new tree is
// built from the nodes, pods and placements the cache holds, so it is
// right whatever order the objects arrived in.
func (c *Cache) UpsertTopology(name string, levels []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.capacity.trees[name]; ok && slices.Equal(t.Levels(), levels) {
		return nil
	}
	t, err := topology.New(levels)
	if err != nil {
		return err
	}
	for _, n := range c.capacity.nodes {
		t.SetNode(topologyNode(n))
	}
	for _, p := range c.capacity.pods {
		if c.counted(p, name) {
			t.AddUsage(p.Node, podUsage(p))
		}
	}
	for _, cw := range c.workloads {
		for _, pl := range placements(cw.wl, name) {
			t.AddAssignment(pl.Assignment)
		}
	}
	c.capacity.trees[name] = t
	return nil
}

// DeleteTopology forgets a topology; its flavors admit nothing until it
// comes back.
func (c *Cache) DeleteTopology(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.capacity.trees, name)
}

// HasTopology reports whether a topology is known.
func (c *Cache) HasTopology(name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.capacity.trees[name]
	return ok
}

// SetNode adds or updates a node. It reports whether anything placement
// reads changed: status heartbeats change nothing.
func (c *Cache) SetNode(n *Node) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.capacity.nodes[n.Name]; ok && sameNode(old, n) {
		return false
	}
	c.capacity.nodes[n.Name] = n
	c.capacity.frozen = nil
	for _, t := range c.capacity.trees {
		t.SetNode(topologyNode(n))
	}
	return true
}

func sameNode(a, b *Node) bool {
	return a.Ready == b.Ready && a.Unschedulable == b.Unschedulable && a.Pods == b.Pods &&
		equalMap(a.Labels, b.Labels) && equalMap(a.Allocatable, b.Allocatable) && equalSlice(a.Taints, b.Taints)
}

// DeleteNode forgets a node; the placements on it are repaired by the
// next cycle.
func (c *Cache) DeleteNode(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.capacity.nodes, name)
	c.capacity.frozen = nil
	for _, t := range c.capacity.trees {
		t.RemoveNode(name)
	}
}

// SetPod records a pod bound to a node (or its new state).
func (c *Cache) SetPod(key string, p *Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropPod(key)
	c.capacity.pods[key] = p
	if p.Workload != "" {
		if c.capacity.podsOf[p.Workload] == nil {
			c.capacity.podsOf[p.Workload] = map[string]bool{}
		}
		c.capacity.podsOf[p.Workload][key] = true
	}
	c.countPod(p, 1)
}

// QueuesUsingTopology lists the ClusterQueues with a flavor on a topology.
func (c *Cache) QueuesUsingTopology(topology string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for name, cq := range c.queues {
		for _, f := range cq.flavorNames() {
			if fl := c.flavors[f]; fl != nil && fl.Topology == topology {
				out = append(out, name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// TopologyQueues lists the ClusterQueues with a flavor that has a
// topology: those that wait on node capacity, not only quota.
func (c *Cache) TopologyQueues() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.capacity.trees) == 0 {
		return nil
	}
	var out []string
	for name, cq := range c.queues {
		for _, f := range cq.flavorNames() {
			if fl := c.flavors[f]; fl != nil && fl.Topology != "" {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// DeletePod forgets a pod (it finished, or was deleted), reporting
// whether it was counted.
func (c *Cache) DeletePod(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.capacity.pods[key]
	c.dropPod(key)
	return ok
}

func (c *Cache) dropPod(key string) {
	p, ok := c.capacity.pods[key]
	if !ok {
		return
	}
	c.countPod(p, -1)
	delete(c.capacity.pods, key)
	if m := c.capacity.podsOf[p.Workload]; m != nil {
		delete(m, key)
		if len(m) == 0 {
			delete(c.capacity.podsOf, p.Workload)
		}
	}
}

// countPod adds (sign 1) or removes (-1) a pod's usage in the trees where
// it counts on its own.
func (c *Cache) countPod(p *Pod, sign int) {
	for name, t := range c.capacity.trees {
		if !c.counted(p, name) {
			continue
		}
		if sign > 0 {
			t.AddUsage(p.Node, podUsage(p))
		} else {
			t.RemoveUsage(p.Node, podUsage(p))
		}
	}
}

// counted says whether a pod counts on its own in a tree: it belongs to no
// workload admitted with a placement there.
func (c *Cache) counted(p *Pod, tree string) bool {
	if p.Workload == "" {
		return true
	}
	cw, ok := c.workloads[p.Workload]
	return !ok || len(placements(cw.wl, tree)) == 0
}

// place records an admitted workload's placements on their trees; its
// pods stop counting on their own there. unplace undoes it.
func (c *Cache) place(wl *Workload) {
	for name, t := range c.capacity.trees {
		pls := placements(wl, name)
		if len(pls) == 0 {
			continue
		}
		for key := range c.capacity.podsOf[wl.Key] {
			p := c.capacity.pods[key]
			t.RemoveUsage(p.Node, podUsage(p))
		}
		for _, pl := range pls {
			t.AddAssignment(pl.Assignment)
		}
	}
	c.indexPlacements(wl, true)
}

func (c *Cache) unplace(wl *Workload) {
	for name, t := range c.capacity.trees {
		pls := placements(wl, name)
		if len(pls) == 0 {
			continue
		}
		for _, pl := range pls {
			t.RemoveAssignment(pl.Assignment)
		}
		for key := range c.capacity.podsOf[wl.Key] {
			p := c.capacity.pods[key]
			t.AddUsage(p.Node, podUsage(p))
		}
	}
	c.indexPlacements(wl, false)
}

func (c *Cache) indexPlacements(wl *Workload, add bool) {
	for _, ps := range wl.Admission.PodSets {
		if ps.Placement == nil {
			continue
		}
		for _, n := range ps.Placement.Nodes {
			m := c.capacity.placedOn[n.Name]
			switch {
			case add && m == nil:
				c.capacity.placedOn[n.Name] = map[string]bool{wl.Key: true}
			case add:
				m[wl.Key] = true
			case m != nil:
				delete(m, wl.Key)
				if len(m) == 0 {
					delete(c.capacity.placedOn, n.Name)
				}
			}
		}
	}
}

// placements lists a workload's placements in one tree.
func placements(wl *Workload, tree string) []*Placement {
	if wl.Admission == nil {
		return nil
	}
	var out []*Placement
	for _, ps := range wl.Admission.PodSets {
		if ps.Placement != nil && ps.Placement.Topology == tree {
			out = append(out, ps.Placement)
		}
	}
	return out
}

func podUsage(p *Pod) topology.Usage {
	return topology.Usage{Resources: topology.Resources(p.Requests), Pods: 1}
}

// TopologyStatus is what a Topology's status reports: the offered nodes
// that carry every level label, and the domains per level.
type TopologyStatus struct {
	Known   bool
	Nodes   int
	Domains []int
}

// TopologyStatus reports a topology's size.
func (c *Cache) TopologyStatus(name string) TopologyStatus {
	c.mu.RLock()
	t, ok := c.capacity.trees[name]
	c.mu.RUnlock()
	if !ok {
		return TopologyStatus{}
	}
	s := t.Snapshot()
	return TopologyStatus{Known: true, Nodes: s.Nodes(), Domains: s.DomainCounts()}
}

// frozenNodes returns the node catalogue for a snapshot; it is copied only
// after a node event.
func (c *Cache) frozenNodes() map[string]*Node {
	c.capacity.frozenMu.Lock()
	defer c.capacity.frozenMu.Unlock()
	if c.capacity.frozen == nil {
		c.capacity.frozen = make(map[string]*Node, len(c.capacity.nodes))
		for k, n := range c.capacity.nodes {
			c.capacity.frozen[k] = n
		}
	}
	return c.capacity.frozen
}

// brokenPlacements lists the admitted workloads with pods placed on a node
// that is gone, not Ready, or tainted NoExecute: their placement must be
// repaired or the workload evicted. A cordoned node is not broken: its
// pods keep running.
func (c *Cache) brokenPlacements() map[string][]string {
	out := map[string][]string{}
	for node, wls := range c.capacity.placedOn {
		n, ok := c.capacity.nodes[node]
		for key := range wls {
			if !ok || !n.Ready || c.evictsFrom(n, key) {
				out[key] = append(out[key], node)
			}
		}
	}
	for _, nodes := range out {
		slices.Sort(nodes)
	}
	return out
}

// evictsFrom says whether a NoExecute taint of the node is untolerated by
// a pod set of the workload placed there.
func (c *Cache) evictsFrom(n *Node, key string) bool {
	cw, ok := c.workloads[key]
	if !ok {
		return false
	}
	for i, psa := range cw.wl.Admission.PodSets {
		if psa.Placement == nil || i >= len(cw.wl.PodSets) {
			continue
		}
		ps := &cw.wl.PodSets[i]
		f := c.flavors[firstTopologyFlavor(psa, c.flavors)]
		var flavorTols []Toleration
		if f != nil {
			flavorTols = f.Tolerations
		}
		for _, t := range n.Taints {
			if t.Effect == "NoExecute" && !tolerated(t, ps.Tolerations) && !tolerated(t, flavorTols) {
				return true
			}
		}
	}
	return false
}

// firstTopologyFlavor is the flavor of the pod set that has a topology.
func firstTopologyFlavor(psa PodSetAssignment, flavors map[string]*Flavor) string {
	for _, res := range sortedKeys(psa.Flavors) {
		if f := flavors[psa.Flavors[res]]; f != nil && f.Topology != "" {
			return f.Name
		}
	}
	return ""
}

// FlavorTopology returns the topology of a flavor, or "".
func (c *Cache) FlavorTopology(flavor string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if f := c.flavors[flavor]; f != nil {
		return f.Topology
	}
	return ""
}
