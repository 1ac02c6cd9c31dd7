package topology

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Mode says how tightly a pod set's pods must sit together.
type Mode int

const (
	// Unconstrained places pods anywhere: in the least free node (or slice
	// domain) that holds them all, else the least free rack, block and so
	// on, else over the top-level domains; inside, the domains and nodes
	// with the least capacity fill first, so that large holes stay free
	// (Kueue's LeastFreeCapacity).
	Unconstrained Mode = iota
	// Required places all pods in one domain of the level, or not at all.
	Required
	// Preferred places all pods in one domain of the level if possible,
	// else in one domain of the nearest coarser level that holds them, else
	// over the fewest top-level domains.
	Preferred
)

func (m Mode) String() string {
	switch m {
	case Required:
		return "required"
	case Preferred:
		return "preferred"
	default:
		return "unconstrained"
	}
}

// PodSet is one set of identical pods to place.
type PodSet struct {
	Name  string
	Count int32
	// Request is one pod's request; resources not named are not needed.
	Request Resources
	Mode    Mode
	// Level is the label key of the level for Required and Preferred.
	Level string
	// Balanced, with Preferred, spreads the pods evenly over the fewest
	// domains below Level first (Kueue's balanced placement; see
	// balanced.go), and places them as Preferred if that fails. PlaceGroup
	// places groups as Preferred.
	Balanced bool
	// SliceLevel and SliceSize, when set, split the pods into slices of
	// SliceSize pods that each land in one domain of SliceLevel, which must
	// not be coarser than Level. Count must be a multiple of SliceSize.
	SliceLevel string
	SliceSize  int32
	// Fits, when set, says whether a pod of the set may run on the node:
	// the caller's verdict on taints, tolerations, selectors and affinity.
	Fits func(node string) bool
	// Mask, when set, is Fits evaluated once for every node of a snapshot
	// (see Snapshot.Mask): the cheap form for a cycle that places many pod
	// sets alike. Both are applied when both are set.
	Mask *NodeMask
}

// NodeMask says, for every node of one snapshot's layout, whether a pod
// set may use it.
type NodeMask struct {
	lay *layout
	ok  []bool
}

// Mask evaluates fits once per node of the snapshot, for PodSet.Mask. A
// mask is valid for every snapshot of the same layout.
func (s *Snapshot) Mask(fits func(node string) bool) *NodeMask {
	m := &NodeMask{lay: s.lay, ok: make([]bool, len(s.lay.names))}
	for i, name := range s.lay.names {
		m.ok[i] = fits(name)
	}
	return m
}

// Assignment is where a pod set's pods go: counts per domain of the last
// level (Kueue's TopologyAssignment) and per node.
type Assignment struct {
	PodSet string
	// Levels are the label keys naming Domains, coarsest first.
	Levels  []string
	Domains []DomainCount
	Nodes   []NodeCount
	// Request is one pod's request, for the usage the assignment takes.
	Request Resources

	lay     *layout
	req     []request
	nodeIdx []int32
}

// DomainCount is a number of pods in one domain, named by its label values.
type DomainCount struct {
	Values []string
	Count  int32
}

// NodeCount is a number of pods on one node.
type NodeCount struct {
	Name  string
	Count int32
}

// usageOf is the usage of n pods of the assignment's pod set.
func (a *Assignment) usageOf(n int32) Usage {
	u := Usage{Resources: make(Resources, len(a.Request)), Pods: int64(n)}
	for name, v := range a.Request {
		u.Resources[name] = v * int64(n)
	}
	return u
}

// ErrInvalid wraps the reasons a pod set cannot be placed whatever the
// capacity; the caller should not retry it.
var ErrInvalid = errors.New("invalid pod set")

// plan is a pod set compiled against a snapshot: resources by position and
// levels by index. Slice-less sets count in slices of one pod at the node
// level, so one code path serves both.
type plan struct {
	ps    *PodSet
	req   []request
	names []string // the requested resources, as in req
	level int      // Level's index; -1 when Unconstrained
	slice int      // SliceLevel's index, or the node level without slices
	size  int64    // pods per slice
	units int64    // slices to place
}

func (s *Snapshot) compile(ps *PodSet) (*plan, error) {
	p := &plan{ps: ps, level: -1, slice: s.lay.nodeLevel(), size: 1}
	if ps.Count <= 0 {
		return nil, fmt.Errorf("%w %s: count %d", ErrInvalid, ps.Name, ps.Count)
	}
	if ps.Mode != Unconstrained {
		if p.level = slices.Index(s.lay.levels, ps.Level); p.level < 0 {
			return nil, fmt.Errorf("%w %s: level %q is not in the topology", ErrInvalid, ps.Name, ps.Level)
		}
	}
	if err := p.compileSlices(s.lay.levels); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(ps.Request)) {
		if v := ps.Request[name]; v > 0 {
			p.req = append(p.req, newRequest(s.lookup(name), v))
			p.names = append(p.names, name)
		}
	}
	p.units = int64(ps.Count) / p.size
	return p, nil
}

func (p *plan) compileSlices(levels []string) error {
	ps := p.ps
	if ps.SliceSize <= 1 && ps.SliceLevel == "" {
		return nil
	}
	i := slices.Index(levels, ps.SliceLevel)
	switch {
	case i < 0:
		return fmt.Errorf("%w %s: slice level %q is not in the topology", ErrInvalid, ps.Name, ps.SliceLevel)
	case ps.SliceSize <= 0 || ps.Count%ps.SliceSize != 0:
		return fmt.Errorf("%w %s: count %d is not a multiple of slice size %d", ErrInvalid, ps.Name, ps.Count, ps.SliceSize)
	case p.level >= 0 && i < p.level:
		return fmt.Errorf("%w %s: slice level %q is coarser than level %q", ErrInvalid, ps.Name, ps.SliceLevel, ps.Level)
	}
	p.slice, p.size = i, int64(ps.SliceSize)
	return nil
}

// Group is the nodes of an assignment below one domain of the last level.
type Group struct {
	// Values name the domain, one per level.
	Values []string
	Nodes  []NodeCount
}

// Groups returns the assignment's nodes grouped by their last-level
// domain, in layout order: the compact form the Workload status keeps.
func (a *Assignment) Groups() []Group {
	out := make([]Group, 0, len(a.Domains))
	k := 0
	for _, d := range a.Domains {
		g := Group{Values: d.Values}
		for left := d.Count; left > 0 && k < len(a.Nodes); k++ {
			g.Nodes = append(g.Nodes, a.Nodes[k])
			left -= a.Nodes[k].Count
		}
		out = append(out, g)
	}
	return out
}
