package harness

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// PlacementStats is what the placement check found in one run. Every
// count should be 0 for a target that admits topology-aware workloads
// correctly.
type PlacementStats struct {
	// Admissions is the admissions checked.
	Admissions int `json:"admissions"`
	// Unplaced are admissions without a topology assignment.
	Unplaced int `json:"unplaced"`
	// Invalid are assignments that could not be read, name a node that does
	// not exist, or place another number of pods than the pod set has.
	Invalid int `json:"invalid"`
	// OverPlacements count (admission, node) pairs where, once the admission
	// was added, the pods of all workloads admitted at the time on the node
	// requested more cpu or pods than the node's allocatable.
	OverPlacements int `json:"overPlacements"`
	// RequiredViolations are required-level admissions spread over more
	// than one domain of that level.
	RequiredViolations int `json:"requiredViolations"`
	// WatchGaps are the times the check's watch lost its place and listed
	// again: between, it saw states, not every change.
	WatchGaps int `json:"watchGaps,omitempty"`
	// Behind is set when the check had not seen the run's last changes
	// when the run ended.
	Behind bool `json:"behind,omitempty"`
	// PeakNodeCPU is the highest cpu any node had admitted, as a fraction
	// of its allocatable.
	PeakNodeCPU float64 `json:"peakNodeCPU"`
	// Examples are the first few problems, for the run's log.
	Examples []string `json:"examples,omitempty"`
}

const maxExamples = 5

// Placements checks every admitted placement against the nodes: it keeps,
// per node, the pods and cpu of the workloads holding an admission, from
// its own watch in the API server's commit order (Watch), and checks the nodes an admission lands on as it is added. Usage only
// grows at an admission, so checking there sees every peak. A workload
// holds its nodes from its admission until it finishes or its admission is
// cleared (an evicted job still runs until it has stopped), as both
// systems count it.
type Placements struct {
	target Target
	topo   *TopologyPlan

	mu sync.Mutex
	// node by name; want is what the generator created, by workload key.
	node map[string]*nodeUse
	want map[string]podSetWant
	// holding is the placement each workload holds now.
	holding map[string]held
	stats   PlacementStats
	// at is the newest resource version the check's watch has seen.
	at uint64
}

// held is a workload's placement, since when it holds it, and whether it
// is being evicted (it still holds its nodes until its admission is
// cleared).
type held struct {
	placed  []NodePods
	since   time.Time
	evicted bool
}

type nodeUse struct {
	plan                   *NodePlan
	capMilliCPU, capPods   int64
	usedMilliCPU, usedPods int64
}

// podSetWant is what the harness asked for: pods, cpu per pod, and the
// level index a required constraint names (-1 if none).
type podSetWant struct {
	pods        int32
	milliCPU    int64
	requiredIdx int
}

// NewPlacements checks placements on the topology's nodes.
func NewPlacements(t Target, topo *TopologyPlan) *Placements {
	p := &Placements{target: t, topo: topo, node: map[string]*nodeUse{},
		want: map[string]podSetWant{}, holding: map[string]held{}}
	for i := range topo.Nodes {
		n := &topo.Nodes[i]
		cpu, pods := n.Allocatable[corev1.ResourceCPU], n.Allocatable[corev1.ResourcePods]
		p.node[n.Name] = &nodeUse{plan: n, capMilliCPU: cpu.MilliValue(), capPods: pods.Value()}
	}
	return p
}

// Expect records what the generator creates under key. Nil-safe: a mix
// without a topology has no checker.
func (p *Placements) Expect(key string, wt WorkloadTemplate) {
	if p == nil {
		return
	}
	w := podSetWant{pods: int32(max(wt.PodCount, 1)), milliCPU: wt.Request.MilliValue(), requiredIdx: -1}
	if wt.TASConstraint == "required" {
		for i, l := range p.topo.Levels {
			if l == wt.TASLevel {
				w.requiredIdx = i
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.want[key] = w
}

// Observe takes a new version of a workload, seen at: holds is whether it
// holds an admission now, evicted whether it is Evicted, assignment its pod
// set's topologyAssignment (nil if none).
func (p *Placements) Observe(key string, holds, evicted bool, assignment map[string]any, at time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	h, holding := p.holding[key]
	switch {
	case holding && !holds:
		p.release(key)
	case !holding && holds:
		p.admit(key, assignment, at)
	case holding && h.evicted != evicted:
		h.evicted = evicted
		p.holding[key] = h
	}
}

func (p *Placements) release(key string) {
	w := p.want[key]
	for _, np := range p.holding[key].placed {
		if n := p.node[np.Node]; n != nil {
			n.usedPods -= int64(np.Pods)
			n.usedMilliCPU -= int64(np.Pods) * w.milliCPU
		}
	}
	delete(p.holding, key)
}

// admit adds the admission's pods to its nodes and checks them. An
// assignment that cannot be read holds nothing (its pods go nowhere the
// harness knows of) but is counted.
func (p *Placements) admit(key string, assignment map[string]any, at time.Time) {
	p.stats.Admissions++
	w := p.want[key]
	if assignment == nil {
		p.stats.Unplaced++
		p.example("%s admitted without a topology assignment", key)
		p.holding[key] = held{since: at}
		return
	}
	placed, err := p.target.placement(assignment)
	if err == nil {
		err = p.validate(placed, w)
	}
	if err != nil {
		p.stats.Invalid++
		p.example("%s: %v", key, err)
		p.holding[key] = held{since: at}
		return
	}
	p.holding[key] = held{placed: placed, since: at}
	for _, np := range placed {
		n := p.node[np.Node]
		n.usedPods += int64(np.Pods)
		n.usedMilliCPU += int64(np.Pods) * w.milliCPU
		if n.usedMilliCPU > n.capMilliCPU || n.usedPods > n.capPods {
			p.stats.OverPlacements++
			p.example("%s at %s over-places node %s: %dm cpu of %dm, %d pods of %d, with %s", key, at.Format(time.StampMilli), np.Node,
				n.usedMilliCPU, n.capMilliCPU, n.usedPods, n.capPods, p.holders(np.Node, key))
		}
		p.stats.PeakNodeCPU = max(p.stats.PeakNodeCPU, float64(n.usedMilliCPU)/float64(n.capMilliCPU))
	}
	if w.requiredIdx >= 0 && p.domains(placed, w.requiredIdx) > 1 {
		p.stats.RequiredViolations++
		p.example("%s requires one %s but spans %d", key, p.topo.Levels[w.requiredIdx], p.domains(placed, w.requiredIdx))
	}
}

// validate: every leaf is a known node, and the pods add up to the pod set.
func (p *Placements) validate(placed []NodePods, w podSetWant) error {
	var pods int32
	for _, np := range placed {
		if p.node[np.Node] == nil {
			return fmt.Errorf("placement names node %q, which does not exist", np.Node)
		}
		pods += np.Pods
	}
	if pods != w.pods {
		return fmt.Errorf("placement has %d pods, the pod set %d", pods, w.pods)
	}
	return nil
}

// domains is how many domains of level idx the placement spans; a domain
// is named by its values from the top level down, as rack-0 may exist in
// every block.
func (p *Placements) domains(placed []NodePods, idx int) int {
	seen := map[string]bool{}
	for _, np := range placed {
		seen[strings.Join(p.node[np.Node].plan.Domains[:idx+1], "/")] = true
	}
	return len(seen)
}

// holders names the other workloads holding pods on a node, for examples.
func (p *Placements) holders(node, except string) string {
	var hs []string
	for key, h := range p.holding {
		for _, np := range h.placed {
			if np.Node == node && key != except {
				state := ""
				if h.evicted {
					state = ", evicted"
				}
				hs = append(hs, fmt.Sprintf("%s (%d pods since %s%s)", key, np.Pods, h.since.Format(time.StampMilli), state))
			}
		}
	}
	slices.Sort(hs)
	return strings.Join(hs, ", ")
}

func (p *Placements) example(format string, args ...any) {
	if len(p.stats.Examples) < maxExamples {
		p.stats.Examples = append(p.stats.Examples, fmt.Sprintf(format, args...))
	}
}

// Stats is what the check found so far. Nil-safe.
func (p *Placements) Stats() *PlacementStats {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Examples = append([]string(nil), s.Examples...)
	return &s
}
