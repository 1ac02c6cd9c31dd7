package harness

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// How each target spells a topology constraint and a placement. The
// harness writes and reads both APIs as unstructured objects; these are
// the only TAS fields where they differ.

// musterTopologyRequest is the same request as Kueue's (the fields have
// the same names): the mix's "balanced" class is what Kueue's generator
// writes for it, slices of sliceSize pods each in one domain of the level
// and no level for the whole set.
func musterTopologyRequest(wt WorkloadTemplate) map[string]any {
	return kueueTopologyRequest(wt)
}

// kueueTopologyRequest is what Kueue's generator writes: a balanced class
// is a slice-only request (slices of sliceSize pods, each in one domain of
// the level), which Kueue places as an unconstrained one with slices;
// Kueue's balanced placement (its TASBalancedPlacement gate) applies to
// the preferred classes.
func kueueTopologyRequest(wt WorkloadTemplate) map[string]any {
	switch wt.TASConstraint {
	case "required":
		return map[string]any{"required": wt.TASLevel}
	case "balanced":
		return map[string]any{"podSetSliceRequiredTopology": wt.TASLevel, "podSetSliceSize": int64(wt.SliceSize)}
	default:
		return map[string]any{"preferred": wt.TASLevel}
	}
}

// NodePods is how many pods of a pod set a placement puts on one leaf
// domain (a node: the last level is kubernetes.io/hostname).
type NodePods struct {
	Node string
	Pods int32
}

// leavesAreNodes: the mix's topologies end with the hostname level, so a
// placement whose last level is another names no nodes.
func leavesAreNodes(levels []string) error {
	if len(levels) == 0 || levels[len(levels)-1] != corev1.LabelHostname {
		return fmt.Errorf("the assignment's levels %v do not end with %s", levels, corev1.LabelHostname)
	}
	return nil
}

// musterAssignment is Muster's topologyAssignment: leaves grouped by their
// parent domain, one count for all of a group's leaves or one per leaf.
type musterAssignment struct {
	Levels  []string `json:"levels"`
	Domains []struct {
		Values []string `json:"values"`
		Leaves []string `json:"leaves"`
		Count  *int32   `json:"count"`
		Counts []int32  `json:"counts"`
	} `json:"domains"`
}

func musterPlacement(ta map[string]any) ([]NodePods, error) {
	var a musterAssignment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ta, &a); err != nil {
		return nil, err
	}
	if err := leavesAreNodes(a.Levels); err != nil {
		return nil, err
	}
	var out []NodePods
	for _, d := range a.Domains {
		if d.Count == nil && len(d.Counts) != len(d.Leaves) {
			return nil, fmt.Errorf("domain %v: %d counts for %d leaves", d.Values, len(d.Counts), len(d.Leaves))
		}
		for i, leaf := range d.Leaves {
			n := NodePods{Node: leaf}
			if d.Count != nil {
				n.Pods = *d.Count
			} else {
				n.Pods = d.Counts[i]
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// kueueAssignment is Kueue v1beta2's topologyAssignment: slices of
// domains, each level's values either one for the whole slice (universal)
// or one per domain (prefix + root + suffix), and likewise the pod counts.
type kueueAssignment struct {
	Levels []string `json:"levels"`
	Slices []struct {
		DomainCount    int32             `json:"domainCount"`
		ValuesPerLevel []kueueLevelValue `json:"valuesPerLevel"`
		PodCounts      struct {
			Universal  *int32  `json:"universal"`
			Individual []int32 `json:"individual"`
		} `json:"podCounts"`
	} `json:"slices"`
}

type kueueLevelValue struct {
	Universal  *string `json:"universal"`
	Individual *struct {
		Prefix string   `json:"prefix"`
		Suffix string   `json:"suffix"`
		Roots  []string `json:"roots"`
	} `json:"individual"`
}

func (v kueueLevelValue) at(i int) (string, error) {
	switch {
	case v.Universal != nil:
		return *v.Universal, nil
	case v.Individual != nil && i < len(v.Individual.Roots):
		return v.Individual.Prefix + v.Individual.Roots[i] + v.Individual.Suffix, nil
	}
	return "", fmt.Errorf("no value for domain %d", i)
}

func kueuePlacement(ta map[string]any) ([]NodePods, error) {
	var a kueueAssignment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ta, &a); err != nil {
		return nil, err
	}
	if err := leavesAreNodes(a.Levels); err != nil {
		return nil, err
	}
	last := len(a.Levels) - 1
	var out []NodePods
	for _, s := range a.Slices {
		if len(s.ValuesPerLevel) != len(a.Levels) {
			return nil, fmt.Errorf("a slice has %d level values for %d levels", len(s.ValuesPerLevel), len(a.Levels))
		}
		for i := range int(s.DomainCount) {
			node, err := s.ValuesPerLevel[last].at(i)
			if err != nil {
				return nil, err
			}
			n := NodePods{Node: node}
			switch {
			case s.PodCounts.Universal != nil:
				n.Pods = *s.PodCounts.Universal
			case i < len(s.PodCounts.Individual):
				n.Pods = s.PodCounts.Individual[i]
			default:
				return nil, fmt.Errorf("no pod count for domain %d", i)
			}
			out = append(out, n)
		}
	}
	return out, nil
}
