package ungater

import (
	"context"

	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// slotList is how many more pods each node of a placement takes, in
// placement order.
type slotList struct {
	nodes []string
	left  map[string]int32
	// bySlot is the placement's node of each slot, in placement order:
	// a node once per pod it gets, the leaves of one parent domain
	// together.
	bySlot []string
}

// take counts a pod already on (or sent to) a node; a node outside the
// placement, such as one replaced after it failed, takes nothing.
func (s *slotList) take(node string) {
	if s.left[node] > 0 {
		s.left[node]--
	}
}

// at returns the node of the slot at position pos and counts it, or ""
// when there is no such slot or its node owes no more pods.
func (s *slotList) at(pos int) string {
	if pos < 0 || pos >= len(s.bySlot) {
		return ""
	}
	n := s.bySlot[pos]
	if s.left[n] == 0 {
		return ""
	}
	s.left[n]--
	return n
}

// next returns the first node still owed a pod and counts it, or "".
func (s *slotList) next() string {
	for _, n := range s.nodes {
		if s.left[n] > 0 {
			s.left[n]--
			return n
		}
	}
	return ""
}

// hostMap maps node names to the hostname labels that select them.
type hostMap struct {
	byNode map[string]string
	byHost map[string]string
}

func (h hostMap) host(node string) string { return h.byNode[node] }

func (h hostMap) node(host string) string {
	if n, ok := h.byHost[host]; ok {
		return n
	}
	return host
}

// slots expands a topology assignment into its nodes with their counts,
// and the hostname of each.
func (u *Ungater) slots(ctx context.Context, ta *musterv1beta1.TopologyAssignment) (*slotList, hostMap, error) {
	s := &slotList{left: map[string]int32{}}
	h := hostMap{byNode: map[string]string{}, byHost: map[string]string{}}
	for _, d := range ta.Domains {
		for i, leaf := range d.Leaves {
			n := ptr.Deref(d.Count, 0)
			if i < len(d.Counts) {
				n = d.Counts[i]
			}
			if _, seen := s.left[leaf]; !seen {
				s.nodes = append(s.nodes, leaf)
			}
			s.left[leaf] += n
			for range n {
				s.bySlot = append(s.bySlot, leaf)
			}
			host, err := jobframework.HostnameOf(ctx, u.client, leaf)
			if err != nil {
				return nil, h, err
			}
			h.byNode[leaf], h.byHost[host] = host, leaf
		}
	}
	return s, h, nil
}
