package core

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/topology"
)

// TopologyRequest is how a pod set's pods must sit in its flavor's
// topology (the podset-*-topology annotations).
type TopologyRequest struct {
	// Mode is Required, Preferred or Unconstrained; Level is the label key
	// of the level for the first two.
	Mode  topology.Mode
	Level string
	// SliceLevel and SliceSize split the pods into slices of SliceSize
	// that each land in one domain of SliceLevel.
	SliceLevel string
	SliceSize  int32
	// Group names the pod sets of the workload that share one domain.
	Group string
}

// NodeSelectorTerm is one term of a required node affinity: all its
// requirements must hold.
type NodeSelectorTerm struct {
	MatchExpressions []NodeSelectorRequirement
	// MatchFields can only name metadata.name.
	MatchFields []NodeSelectorRequirement
}

// NodeSelectorRequirement is a label (or field) requirement, with the
// operators of a pod's node affinity: In, NotIn, Exists, DoesNotExist, Gt,
// Lt.
type NodeSelectorRequirement struct {
	Key      string
	Operator string
	Values   []string
}

// Node is a cluster node as topology placement sees it.
type Node struct {
	Name   string
	Labels map[string]string
	// Taints are the node's NoSchedule and NoExecute taints.
	Taints      []Taint
	Allocatable Requests
	// Pods is the node's allocatable pod count.
	Pods int64
	// Ready is the node's Ready condition; Unschedulable is
	// spec.unschedulable (cordoned). Only a Ready, schedulable node is
	// offered to new placements; a placement on a node that is no longer
	// Ready is repaired (see Schedule).
	Ready         bool
	Unschedulable bool
	// NotReadySince is when a node that is not Ready stopped being Ready
	// (its Ready condition's transition time); zero when unknown.
	NotReadySince time.Time
}

// offered says whether new pods may be placed on the node.
func (n *Node) offered() bool { return n.Ready && !n.Unschedulable }

// Pod is a pod bound to a node, as capacity sees it.
type Pod struct {
	Node     string
	Requests Requests
	// Workload is the key of the Muster workload the pod belongs to, or
	// empty, and PodSet the name of its pod set: a live pod of a placed
	// pod set fills its placement's room instead of adding to it.
	Workload string
	PodSet   string
	// Terminating: the pod is being deleted. It still takes its node until
	// it is gone, but fills no placement: its replacement needs the room.
	Terminating bool

	asAssignment *topology.Assignment
}

// Footprint is the pod as a one-pod assignment on its node (built when the
// cache records the pod).
func (p *Pod) Footprint() *topology.Assignment {
	if p.asAssignment == nil {
		return newPodFootprint(p)
	}
	return p.asAssignment
}

// SetFootprint builds the pod's footprint once, as the cache records it,
// so that snapshots share it.
func (p *Pod) SetFootprint() { p.asAssignment = newPodFootprint(p) }

func newPodFootprint(p *Pod) *topology.Assignment {
	return &topology.Assignment{Nodes: []topology.NodeCount{{Name: p.Node, Count: 1}}, Request: topology.Resources(p.Requests)}
}

// Placement is where an admitted pod set's pods go in a topology.
type Placement struct {
	Topology string
	*topology.Assignment
}

// Fits says whether a pod of the set may run on the node of a flavor: the
// flavor's and the pod set's labels, the pod set's required node affinity,
// and the node's NoSchedule and NoExecute taints against the pod set's
// and the flavor's tolerations.
func Fits(ps *PodSet, f *Flavor, n *Node) bool {
	if !n.offered() || !hasLabels(n.Labels, f.NodeLabels) || !hasLabels(n.Labels, ps.NodeSelector) {
		return false
	}
	if len(ps.Affinity) > 0 && !slices.ContainsFunc(ps.Affinity, func(t NodeSelectorTerm) bool { return t.matches(n) }) {
		return false
	}
	return !untoleratedTaint(n, ps.Tolerations, f.Tolerations)
}

// untoleratedTaint reports whether the node has a NoSchedule or NoExecute
// taint that neither list of tolerations tolerates.
func untoleratedTaint(n *Node, a, b []Toleration) bool {
	for _, t := range n.Taints {
		if (t.Effect == "NoSchedule" || t.Effect == "NoExecute") && !Tolerated(t, a) && !Tolerated(t, b) {
			return true
		}
	}
	return false
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func (t NodeSelectorTerm) matches(n *Node) bool {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return false // an empty term matches nothing, as in Kubernetes
	}
	for _, r := range t.MatchExpressions {
		v, ok := n.Labels[r.Key]
		if !r.matches(v, ok) {
			return false
		}
	}
	for _, r := range t.MatchFields {
		if r.Key != "metadata.name" || !r.matches(n.Name, true) {
			return false
		}
	}
	return true
}

func (r NodeSelectorRequirement) matches(v string, ok bool) bool {
	switch r.Operator {
	case "In":
		return ok && slices.Contains(r.Values, v)
	case "NotIn":
		return !ok || !slices.Contains(r.Values, v)
	case "Exists":
		return ok
	case "DoesNotExist":
		return !ok
	case "Gt", "Lt":
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		return (r.Operator == "Gt" && have > want) || (r.Operator == "Lt" && have < want)
	}
	return false
}

// placementKey identifies what decides where a pod set may be placed
// beyond its labels and tolerations: its affinity and topology request.
func placementKey(ps *PodSet) string {
	if ps.Topology == nil && len(ps.Affinity) == 0 {
		return ""
	}
	var b strings.Builder
	if t := ps.Topology; t != nil {
		fmt.Fprintf(&b, "%d/%s/%s/%d/%s", t.Mode, t.Level, t.SliceLevel, t.SliceSize, t.Group)
	}
	for _, t := range ps.Affinity {
		fmt.Fprintf(&b, "|%v%v", t.MatchExpressions, t.MatchFields)
	}
	return b.String()
}

// TopologyNode converts a node for the topology tree. A node not offered
// keeps its place (and the usage on it) with no room, so its pods are not
// forgotten while it is cordoned or not ready.
func TopologyNode(n *Node) topology.Node {
	tn := topology.Node{Name: n.Name, Labels: n.Labels}
	if n.offered() {
		tn.Allocatable, tn.Pods = topology.Resources(n.Allocatable), n.Pods
	}
	return tn
}

func Tolerated(t Taint, tolerations []Toleration) bool {
	for _, tol := range tolerations {
		if tol.Effect != "" && tol.Effect != t.Effect {
			continue
		}
		if tol.Key == "" && tol.Operator == "Exists" {
			return true
		}
		if tol.Key != t.Key {
			continue
		}
		if tol.Operator == "Exists" || tol.Value == t.Value {
			return true
		}
	}
	return false
}
