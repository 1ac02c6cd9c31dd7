package harness

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TopologyConfig is Kueue's generator schema for a topology-aware mix: the
// levels coarsest first, Count domains of each level under each domain of
// the level above, the last level being the nodes with Capacity each.
type TopologyConfig struct {
	Name   string          `json:"name"`
	Levels []TopologyLevel `json:"levels"`
}

// TopologyLevel is one level: its domains are labelled NodeLabel=<name>-<i>.
type TopologyLevel struct {
	Name      string       `json:"name"`
	Count     int          `json:"count"`
	NodeLabel string       `json:"nodeLabel"`
	Capacity  NodeCapacity `json:"capacity,omitempty"`
}

// NodeCapacity is a node's allocatable cpu and memory (Kueue's generator
// defaults: 96 and 256Gi; pods are always 110, as there).
type NodeCapacity struct {
	CPU    resource.Quantity `json:"cpu,omitempty"`
	Memory resource.Quantity `json:"memory,omitempty"`
}

// flavorNodeValue is the value of the flavor's node label on every node,
// as in Kueue's generator.
const flavorNodeValue = "tas"

// nodePods is every node's pod capacity, as in Kueue's generator.
const nodePods = 110

// TopologyPlan is the nodes and the Topology of a topology-aware mix.
type TopologyPlan struct {
	Name string
	// Levels are the topology's node labels, coarsest first; the last is
	// kubernetes.io/hostname.
	Levels []string
	Nodes  []NodePlan
	// FlavorLabel is the node label (value "tas") the flavor selects.
	FlavorLabel string
}

// NodePlan is one Node: its labels and allocatable (= capacity).
type NodePlan struct {
	Name   string
	Labels map[string]string
	// Domains are its level values, coarsest first (the last is Name).
	Domains     []string
	Allocatable corev1.ResourceList
}

// validateTopology checks the topology and the flavor together: a flavor
// with a topology must select nodes (Muster's CRD and Kueue's generator
// both require it), and the last level must be the hostname so that every
// placement names nodes, which the capacity check needs.
func (c *Config) validateTopology() error {
	rf := c.ResourceFlavor
	if c.Topology == nil {
		if rf != nil && rf.TopologyName != "" {
			return fmt.Errorf("resourceFlavor.topologyName %q names no topology", rf.TopologyName)
		}
		return nil
	}
	t := c.Topology
	nodeFitOnly := rf != nil && rf.TopologyName == "" && (rf.NodeFit == "Check" || rf.NodeFit == "Pin")
	if rf == nil || (rf.TopologyName != t.Name && !nodeFitOnly) || rf.NodeLabel == "" {
		return errors.New("a topology needs a resourceFlavor with its name as topologyName (or nodeFit Check or Pin) and a nodeLabel")
	}
	if t.Name == "" || len(t.Levels) < 2 && !nodeFitOnly {
		return errors.New("topology: a name and at least two levels are required")
	}
	seen := map[string]bool{}
	for i, l := range t.Levels {
		if l.Name == "" || l.Count < 1 || l.NodeLabel == "" || seen[l.NodeLabel] {
			return fmt.Errorf("topology.levels[%d]: a name, a count >= 1 and a node label of its own are required", i)
		}
		seen[l.NodeLabel] = true
	}
	if t.Levels[len(t.Levels)-1].NodeLabel != corev1.LabelHostname {
		return fmt.Errorf("topology: the last level must be %s (placements must name nodes)", corev1.LabelHostname)
	}
	return nil
}

// tasConstraints are the constraints of Kueue's generator.
var tasConstraints = []string{"required", "preferred", "balanced"}

func (wt *WorkloadTemplate) validateTopology(topo *TopologyConfig) error {
	if wt.TASConstraint == "" && wt.TASLevel == "" && wt.SliceSize == 0 {
		return nil
	}
	if topo == nil {
		return errors.New("topology-aware fields need a topology")
	}
	if !slices.Contains(tasConstraints, wt.TASConstraint) {
		return fmt.Errorf("tasConstraint %q is not one of %v", wt.TASConstraint, tasConstraints)
	}
	if !slices.ContainsFunc(topo.Levels, func(l TopologyLevel) bool { return l.NodeLabel == wt.TASLevel }) {
		return fmt.Errorf("tasLevel %q is not a level of the topology", wt.TASLevel)
	}
	balanced := wt.TASConstraint == "balanced"
	if balanced != (wt.SliceSize > 0) || (balanced && int32(max(wt.PodCount, 1))%wt.SliceSize != 0) {
		return errors.New("sliceSize goes with balanced only, and must divide podCount")
	}
	return nil
}

// topologyPlan expands the levels into nodes, named as Kueue's generator
// names them (node-b0-r2-n15 for block 0, rack 2, node 15). Unlike that
// generator, whose hostname label is the node's index in its rack
// (node-15 in every rack, so Kueue sees one host per index), a node's
// kubernetes.io/hostname is its name, as a kubelet sets it.
func (c *Config) topologyPlan() *TopologyPlan {
	t := c.Topology
	if t == nil {
		return nil
	}
	p := &TopologyPlan{Name: t.Name, FlavorLabel: c.ResourceFlavor.NodeLabel}
	for _, l := range t.Levels {
		p.Levels = append(p.Levels, l.NodeLabel)
	}
	alloc := nodeAllocatable(t.Levels[len(t.Levels)-1].Capacity)
	var walk func(level int, path []int)
	walk = func(level int, path []int) {
		if level == len(t.Levels) {
			p.Nodes = append(p.Nodes, p.node(t.Levels, path, alloc))
			return
		}
		for i := range t.Levels[level].Count {
			walk(level+1, append(slices.Clone(path), i))
		}
	}
	walk(0, nil)
	return p
}

func (p *TopologyPlan) node(levels []TopologyLevel, path []int, alloc corev1.ResourceList) NodePlan {
	var name strings.Builder
	name.WriteString("node")
	for i, l := range levels {
		fmt.Fprintf(&name, "-%c%d", l.Name[0], path[i])
	}
	n := NodePlan{Name: name.String(), Labels: map[string]string{p.FlavorLabel: flavorNodeValue}, Allocatable: alloc}
	for i, l := range levels {
		v := fmt.Sprintf("%s-%d", l.Name, path[i])
		if l.NodeLabel == corev1.LabelHostname {
			v = n.Name
		}
		n.Labels[l.NodeLabel] = v
		n.Domains = append(n.Domains, v)
	}
	return n
}

func nodeAllocatable(c NodeCapacity) corev1.ResourceList {
	cpu, mem := c.CPU, c.Memory
	if cpu.IsZero() {
		cpu = resource.MustParse("96")
	}
	if mem.IsZero() {
		mem = resource.MustParse("256Gi")
	}
	return corev1.ResourceList{
		corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem,
		corev1.ResourcePods: *resource.NewQuantity(nodePods, resource.DecimalSI),
	}
}
