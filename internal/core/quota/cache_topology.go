package quota

import (
	"maps"
	"slices"
	"sync"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/topology"
)

// capacity is the node side of the cache: the topologies, the nodes and
// the pods bound to them. Every topology tree holds every node that
// carries its level labels, with free capacity = allocatable − every pod
// bound there, wherever its workload was placed − the part of admitted
// workloads' placements that no live pod fills yet (their unfilled room).
// A pod is counted where it actually is, from binding until it is gone,
// so neither a pod kube-scheduler bound outside its placement (node fit
// Check) nor one left behind on a node its placement moved from is
// counted nowhere; the unfilled room keeps the placement's promise for
// the pods still to come.
type capacity struct {
	trees map[string]*topology.Tree
	nodes map[string]*core.Node
	// frozen is a copy of nodes for snapshots, nil after a node event;
	// frozenMu guards its lazy rebuild, which runs under the cache's read
	// lock.
	frozenMu sync.Mutex
	frozen   map[string]*core.Node
	pods     map[string]*core.Pod
	// podsOf indexes the pods by workload key.
	podsOf map[string]map[string]bool
	// placedOn indexes admitted workloads with a placement by node.
	placedOn map[string]map[string]bool
	// unfilled is, per placed workload and tree, the room its placements
	// still take beyond its live pods, as applied to the tree.
	unfilled map[string]map[string][]*topology.Assignment
}

func newCapacity() *capacity {
	c := &capacity{trees: map[string]*topology.Tree{}, nodes: map[string]*core.Node{}, pods: map[string]*core.Pod{},
		podsOf: map[string]map[string]bool{}, placedOn: map[string]map[string]bool{},
		unfilled: map[string]map[string][]*topology.Assignment{}}
	c.trees[NodesTopology], _ = topology.New([]string{topology.HostnameLabel})
	return c
}

// NodesTopology is the implicit topology of the flavors that check node
// fit without a Topology of their own: one level, the hostname, over
// every node. A Topology object cannot have this name (it is not a DNS
// subdomain).
const NodesTopology = "muster.dev/nodes"

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
		t.SetNode(core.TopologyNode(n))
	}
	for _, p := range c.capacity.pods {
		t.AddUsage(p.Node, podUsage(p))
	}
	c.capacity.trees[name] = t
	for _, cw := range c.workloads {
		if len(placements(cw.wl, name)) > 0 {
			c.refill(cw.wl)
		}
	}
	return nil
}

// DeleteTopology forgets a topology; its flavors admit nothing until it
// comes back.
func (c *Cache) DeleteTopology(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name == NodesTopology {
		return
	}
	delete(c.capacity.trees, name)
	for _, byTree := range c.capacity.unfilled {
		delete(byTree, name)
	}
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
func (c *Cache) SetNode(n *core.Node) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.capacity.nodes[n.Name]
	if ok && sameNode(old, n) {
		return false
	}
	c.capacity.nodes[n.Name] = n
	c.capacity.frozen = nil
	for _, t := range c.capacity.trees {
		t.SetNode(core.TopologyNode(n))
	}
	if !ok || old.Ready != n.Ready {
		c.refillOn(n.Name)
	}
	return true
}

func sameNode(a, b *core.Node) bool {
	return a.Ready == b.Ready && a.Unschedulable == b.Unschedulable && a.Pods == b.Pods &&
		maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Allocatable, b.Allocatable) && slices.Equal(a.Taints, b.Taints)
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
	c.refillOn(name)
}

// SetPod records a pod bound to a node (or its new state).
func (c *Cache) SetPod(key string, p *core.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropPod(key)
	p.SetFootprint()
	c.capacity.pods[key] = p
	if p.Workload != "" {
		if c.capacity.podsOf[p.Workload] == nil {
			c.capacity.podsOf[p.Workload] = map[string]bool{}
		}
		c.capacity.podsOf[p.Workload][key] = true
	}
	c.countPod(p, 1)
	c.refillWorkload(p.Workload)
}

// QueuesUsingTopology lists the ClusterQueues with a flavor on a topology.
func (c *Cache) QueuesUsingTopology(topology string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for name, cq := range c.queues {
		for _, f := range cq.FlavorNames() {
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
// topology (its own, or the nodes' when it checks node fit): those that
// wait on node capacity, not only quota.
func (c *Cache) TopologyQueues() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for name, cq := range c.queues {
		for _, f := range cq.FlavorNames() {
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
	p, ok := c.capacity.pods[key]
	c.dropPod(key)
	if ok {
		c.refillWorkload(p.Workload)
	}
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

// countPod adds (sign 1) or removes (-1) a pod's usage in every tree.
func (c *Cache) countPod(p *core.Pod, sign int) {
	for _, t := range c.capacity.trees {
		if sign > 0 {
			t.AddUsage(p.Node, podUsage(p))
		} else {
			t.RemoveUsage(p.Node, podUsage(p))
		}
	}
}

// place records an admitted workload's placements on their trees as
// unfilled room; unplace gives it back. The pods count on their own
// either way.
func (c *Cache) place(wl *core.Workload) {
	c.indexPlacements(wl, true)
	c.refill(wl)
}

func (c *Cache) unplace(wl *core.Workload) {
	c.setUnfilled(wl.Key, nil)
	c.indexPlacements(wl, false)
}

// refillWorkload recomputes the unfilled room of the workload with this
// key, if it is admitted.
func (c *Cache) refillWorkload(key string) {
	if key == "" {
		return
	}
	if cw, ok := c.workloads[key]; ok {
		c.refill(cw.wl)
	}
}

// refillOn recomputes the unfilled room of the workloads with pods on a
// node, after it became Ready or stopped being (or left): whether those
// pods fill their placement depends on it.
func (c *Cache) refillOn(node string) {
	seen := map[string]bool{}
	for _, p := range c.capacity.pods {
		if p.Node == node && p.Workload != "" && !seen[p.Workload] {
			seen[p.Workload] = true
			c.refillWorkload(p.Workload)
		}
	}
}

// refill recomputes a workload's unfilled room in every tree it is placed
// in and applies the difference.
func (c *Cache) refill(wl *core.Workload) {
	if wl.Admission == nil {
		return
	}
	var byTree map[string][]*topology.Assignment
	for i, ps := range wl.Admission.PodSets {
		pl := ps.Placement
		if pl == nil || c.capacity.trees[pl.Topology] == nil {
			continue
		}
		if a := c.unfilledOf(wl.Key, podSetName(wl, i), pl.Assignment); a != nil {
			if byTree == nil {
				byTree = map[string][]*topology.Assignment{}
			}
			byTree[pl.Topology] = append(byTree[pl.Topology], a)
		}
	}
	c.setUnfilled(wl.Key, byTree)
}

// podSetName is the name of an admitted pod set, which its pods carry.
func podSetName(wl *core.Workload, i int) string {
	if n := wl.Admission.PodSets[i].Name; n != "" {
		return n
	}
	if i < len(wl.PodSets) {
		return wl.PodSets[i].Name
	}
	return ""
}

// setUnfilled replaces what a workload's unfilled room takes in the trees.
func (c *Cache) setUnfilled(key string, byTree map[string][]*topology.Assignment) {
	for name, as := range c.capacity.unfilled[key] {
		if t := c.capacity.trees[name]; t != nil {
			for _, a := range as {
				t.RemoveAssignment(a)
			}
		}
	}
	for name, as := range byTree {
		for _, a := range as {
			c.capacity.trees[name].AddAssignment(a)
		}
	}
	if byTree == nil {
		delete(c.capacity.unfilled, key)
	} else {
		c.capacity.unfilled[key] = byTree
	}
}

// unfilledOf is the part of a pod set's placement that its live pods (bound
// to a Ready node and not terminating) do not fill: per node, the placed
// count less the live pods there, and in all no more than the pods still to
// come. nil when the pods fill it.
func (c *Cache) unfilledOf(key, podSet string, pl *topology.Assignment) *topology.Assignment {
	live := map[string]int32{}
	var total, placed int32
	for pk := range c.capacity.podsOf[key] {
		p := c.capacity.pods[pk]
		if p.PodSet != podSet || p.Terminating {
			continue
		}
		if n := c.capacity.nodes[p.Node]; n != nil && n.Ready {
			live[p.Node]++
			total++
		}
	}
	for _, n := range pl.Nodes {
		placed += n.Count
	}
	budget := placed - total
	out := &topology.Assignment{PodSet: pl.PodSet, Levels: pl.Levels, Request: pl.Request}
	for _, n := range pl.Nodes {
		take := min(max(n.Count-live[n.Name], 0), max(budget, 0))
		if take > 0 {
			out.Nodes = append(out.Nodes, topology.NodeCount{Name: n.Name, Count: take})
			budget -= take
		}
	}
	if len(out.Nodes) == 0 {
		return nil
	}
	return out
}

func (c *Cache) indexPlacements(wl *core.Workload, add bool) {
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
func placements(wl *core.Workload, tree string) []*core.Placement {
	if wl.Admission == nil {
		return nil
	}
	var out []*core.Placement
	for _, ps := range wl.Admission.PodSets {
		if ps.Placement != nil && ps.Placement.Topology == tree {
			out = append(out, ps.Placement)
		}
	}
	return out
}

func podUsage(p *core.Pod) topology.Usage {
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
func (c *Cache) frozenNodes() map[string]*core.Node {
	c.capacity.frozenMu.Lock()
	defer c.capacity.frozenMu.Unlock()
	if c.capacity.frozen == nil {
		c.capacity.frozen = make(map[string]*core.Node, len(c.capacity.nodes))
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
func (c *Cache) evictsFrom(n *core.Node, key string) bool {
	cw, ok := c.workloads[key]
	if !ok {
		return false
	}
	for i, psa := range cw.wl.Admission.PodSets {
		if psa.Placement == nil || i >= len(cw.wl.PodSets) {
			continue
		}
		ps := &cw.wl.PodSets[i]
		f := c.flavors[FirstTopologyFlavor(psa, c.flavors)]
		var flavorTols []core.Toleration
		if f != nil {
			flavorTols = f.Tolerations
		}
		for _, t := range n.Taints {
			if t.Effect == "NoExecute" && !notReadyTaints[t.Key] && !core.Tolerated(t, ps.Tolerations) && !core.Tolerated(t, flavorTols) {
				return true
			}
		}
	}
	return false
}

// notReadyTaints are the NoExecute taints the node lifecycle controller
// puts on a NotReady or unreachable node: they say what its Ready
// condition says, and fail the node only once its grace period is over
// (pods tolerate them for 5 minutes by default).
var notReadyTaints = map[string]bool{"node.kubernetes.io/not-ready": true, "node.kubernetes.io/unreachable": true}

// FirstTopologyFlavor is the flavor of the pod set that has a topology.
func FirstTopologyFlavor(psa core.PodSetAssignment, flavors map[string]*core.Flavor) string {
	for _, res := range slices.Sorted(maps.Keys(psa.Flavors)) {
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
