package scheduling

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/topology"
)

// This file translates topology requests and placements between the API
// and the core.

func toTopologyRequest(r *musterv1beta1.PodSetTopologyRequest) *core.TopologyRequest {
	if r == nil {
		return nil
	}
	out := &core.TopologyRequest{Mode: topology.Unconstrained}
	switch {
	case r.Required != nil:
		out.Mode, out.Level = topology.Required, *r.Required
	case r.Preferred != nil:
		out.Mode, out.Level = topology.Preferred, *r.Preferred
	}
	out.SliceLevel = ptr.Deref(r.PodSetSliceRequiredTopology, "")
	out.SliceSize = ptr.Deref(r.PodSetSliceSize, 0)
	out.Group = ptr.Deref(r.PodSetGroupName, "")
	return out
}

// toAffinity is a pod spec's required node affinity.
func toAffinity(spec *corev1.PodSpec) []core.NodeSelectorTerm {
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var out []core.NodeSelectorTerm
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		out = append(out, core.NodeSelectorTerm{MatchExpressions: toRequirements(t.MatchExpressions), MatchFields: toRequirements(t.MatchFields)})
	}
	return out
}

func toRequirements(rs []corev1.NodeSelectorRequirement) []core.NodeSelectorRequirement {
	var out []core.NodeSelectorRequirement
	for _, r := range rs {
		out = append(out, core.NodeSelectorRequirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values})
	}
	return out
}

// toPlacement reads an admitted pod set's topology assignment back. The
// topology is its flavor's; the per-pod request, the pod set's.
func toPlacement(ta *musterv1beta1.TopologyAssignment, topologyName string, request core.Requests) *core.Placement {
	if ta == nil {
		return nil
	}
	a := &topology.Assignment{Levels: ta.Levels, Request: topology.Resources{}}
	for name, v := range request {
		if name != string(corev1.ResourcePods) {
			a.Request[name] = v
		}
	}
	for _, d := range ta.Domains {
		for i, leaf := range d.Leaves {
			n := ptr.Deref(d.Count, 0)
			if i < len(d.Counts) {
				n = d.Counts[i]
			}
			a.Nodes = append(a.Nodes, topology.NodeCount{Name: leaf, Count: n})
		}
	}
	return &core.Placement{Topology: topologyName, Assignment: a}
}

// fromPlacement writes a placement compactly: the nodes grouped by their
// last-level domain, named once, and one count when all nodes of a group
// get the same. The levels end with kubernetes.io/hostname, whose values
// are the leaves; a topology whose last level is another label gets it
// appended.
func fromPlacement(pl *core.Placement) *musterv1beta1.TopologyAssignment {
	if pl == nil {
		return nil
	}
	levels := append([]string(nil), pl.Levels...)
	drop := 1 // the group's last value names the hostname: it is the leaf
	if len(levels) == 0 || levels[len(levels)-1] != topology.HostnameLabel {
		levels, drop = append(levels, topology.HostnameLabel), 0
	}
	out := &musterv1beta1.TopologyAssignment{Levels: levels}
	var cur *musterv1beta1.TopologyDomainAssignment
	for _, g := range pl.Groups() {
		parent := g.Values[:len(g.Values)-drop]
		if cur == nil || !slices.Equal(cur.Values, parent) {
			out.Domains = append(out.Domains, musterv1beta1.TopologyDomainAssignment{Values: parent})
			cur = &out.Domains[len(out.Domains)-1]
		}
		for _, n := range g.Nodes {
			cur.Leaves = append(cur.Leaves, n.Name)
			cur.Counts = append(cur.Counts, n.Count)
		}
	}
	for i := range out.Domains {
		compactCounts(&out.Domains[i])
	}
	return out
}

// compactCounts replaces per-leaf counts by one when they are all equal.
func compactCounts(d *musterv1beta1.TopologyDomainAssignment) {
	for _, c := range d.Counts {
		if c != d.Counts[0] {
			return
		}
	}
	if len(d.Counts) > 0 {
		d.Count, d.Counts = ptr.To(d.Counts[0]), nil
	}
}
