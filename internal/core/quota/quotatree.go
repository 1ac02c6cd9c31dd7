package quota

// The quota tree: ClusterQueues are its leaves, cohorts its inner nodes.
// What a queue may use (available), could use with nothing else admitted
// (potential) and keeps for itself (guaranteed) is computed here.

import (
	"sort"

	"github.com/musterhq/muster/internal/core"
)

// TreeNode is a ClusterQueue (leaf) or a cohort in the quota tree.
//
// subtree is what the TreeNode's subtree brings to its parent's pool per
// flavor-resource: its own nominal quota plus, for a cohort, what its
// children lend. A TreeNode with a lendingLimit keeps subtree-lendingLimit for
// itself ("guaranteed"); only usage beyond that bubbles up to the parent.
type TreeNode struct {
	Name     string
	Parent   *TreeNode
	Children []*TreeNode
	Queue    *QueueSnapshot // nil for cohorts
	Own      map[core.FlavorResource]core.ResourceQuota
	Subtree  core.Usage
	Usage    core.Usage
	// Work is usage without the room held during a cycle for waiting
	// preemptors (cycle.holdRoom): what workloads use. It bubbles up like
	// usage, on its own, rather than being usage minus a running total of
	// held deltas: below a lending limit, how much of a change reaches the
	// parent depends on the node's usage at that moment, so a hold and its
	// later release can reach an ancestor in different amounts.
	Work   core.Usage
	weight int64
	// decayed is the node's decayed usage, with usage decay on.
	decayed *DecayedUsage
}

func newNode(name string, groups []core.ResourceGroup, weight int64) *TreeNode {
	n := &TreeNode{Name: name, Own: map[core.FlavorResource]core.ResourceQuota{}, Subtree: core.Usage{}, Usage: core.Usage{}, Work: core.Usage{}, weight: weight}
	for _, g := range groups {
		for _, f := range g.Flavors {
			for res, q := range f.Resources {
				n.Own[core.FlavorResource{Flavor: f.Flavor, Resource: res}] = q
			}
		}
	}
	return n
}

// Guaranteed is the part of the node's subtree quota it does not lend.
func (n *TreeNode) Guaranteed(fr core.FlavorResource) int64 {
	q, ok := n.Own[fr]
	if !ok || q.LendingLimit == nil || n.Parent == nil {
		return 0
	}
	return max(0, n.Subtree[fr]-*q.LendingLimit)
}

// computeSubtree fills subtree bottom-up.
func (n *TreeNode) computeSubtree() {
	for fr, q := range n.Own {
		n.Subtree[fr] = q.Nominal
	}
	for _, c := range n.Children {
		c.computeSubtree()
		for fr, v := range c.Subtree {
			n.Subtree[fr] += v - c.Guaranteed(fr)
		}
	}
}

// addUsage adds (or with a negative delta removes) usage at the node and
// bubbles to the parents whatever exceeds what each node guarantees itself.
func (n *TreeNode) addUsage(fr core.FlavorResource, delta int64) { n.add(fr, delta, false) }

// AddReserve adds room held for a waiting preemptor: usage, as addUsage,
// but not work, so that held room makes nobody a borrower.
func (n *TreeNode) AddReserve(fr core.FlavorResource, delta int64) { n.add(fr, delta, true) }

func (n *TreeNode) add(fr core.FlavorResource, delta int64, reserve bool) {
	bubble(n, fr, delta, func(x *TreeNode) core.Usage { return x.Usage })
	if !reserve {
		bubble(n, fr, delta, func(x *TreeNode) core.Usage { return x.Work })
	}
}

// bubble adds delta to the usage of(n) and passes up to each parent what
// exceeds what the node guarantees itself, before and after.
func bubble(n *TreeNode, fr core.FlavorResource, delta int64, of func(*TreeNode) core.Usage) {
	for x := n; x != nil && delta != 0; x = x.Parent {
		u, g := of(x), x.Guaranteed(fr)
		before := max(0, u[fr]-g)
		u[fr] += delta
		if u[fr] == 0 {
			delete(u, fr)
		}
		delta = max(0, u[fr]-g) - before
	}
}

// available is how much more of fr the node can use: what is left of its
// guaranteed quota plus what its parent can give, within its borrowing
// limit.
func (n *TreeNode) available(fr core.FlavorResource) int64 {
	if n.Parent == nil {
		return max(0, n.Subtree[fr]-n.Usage[fr])
	}
	g := n.Guaranteed(fr)
	local := max(0, g-n.Usage[fr])
	fromParent := n.Parent.available(fr)
	if q, ok := n.Own[fr]; ok && q.BorrowingLimit != nil {
		inParent := n.Subtree[fr] - g
		usedInParent := max(0, n.Usage[fr]-g)
		fromParent = min(fromParent, inParent-usedInParent+*q.BorrowingLimit)
	} else if !ok && n.Queue != nil {
		return 0 // a queue has no quota at all for a flavor-resource it doesn't list
	}
	return local + max(0, fromParent)
}

// Potential is what the node could use if nothing else in the tree were
// used: the bound preemption can reach.
func (n *TreeNode) Potential(fr core.FlavorResource) int64 {
	if n.Parent == nil {
		return n.Subtree[fr]
	}
	if _, ok := n.Own[fr]; !ok && n.Queue != nil {
		return 0
	}
	g := n.Guaranteed(fr)
	p := n.Parent.Potential(fr)
	if q, ok := n.Own[fr]; ok && q.BorrowingLimit != nil {
		p = min(p, n.Subtree[fr]-g+*q.BorrowingLimit)
	}
	return g + p
}

// Borrowing reports whether the workloads under the node use more of fr
// than its subtree's quota: room held for waiting preemptors is not
// borrowed by anyone, and must not make a queue a reclaim target.
func (n *TreeNode) Borrowing(fr core.FlavorResource) bool {
	return n.Work[fr] > n.Subtree[fr]
}

func (n *TreeNode) Root() *TreeNode {
	r := n
	for r.Parent != nil {
		r = r.Parent
	}
	return r
}

// Leaves lists the ClusterQueues under the node, by name.
func (n *TreeNode) Leaves() []*QueueSnapshot {
	if n.Queue != nil {
		return []*QueueSnapshot{n.Queue}
	}
	var out []*QueueSnapshot
	for _, c := range n.Children {
		out = append(out, c.Leaves()...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
