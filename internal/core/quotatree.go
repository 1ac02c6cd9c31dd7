package core

// The quota tree: ClusterQueues are its leaves, cohorts its inner nodes.
// What a queue may use (available), could use with nothing else admitted
// (potential) and keeps for itself (guaranteed) is computed here.

import (
	"sort"
)

// node is a ClusterQueue (leaf) or a cohort in the quota tree.
//
// subtree is what the node's subtree brings to its parent's pool per
// flavor-resource: its own nominal quota plus, for a cohort, what its
// children lend. A node with a lendingLimit keeps subtree-lendingLimit for
// itself ("guaranteed"); only usage beyond that bubbles up to the parent.
type node struct {
	name     string
	parent   *node
	children []*node
	queue    *QueueSnapshot // nil for cohorts
	own      map[FlavorResource]ResourceQuota
	subtree  Usage
	usage    Usage
	// work is usage without the room held during a cycle for waiting
	// preemptors (cycle.holdRoom): what workloads use. It bubbles up like
	// usage, on its own, rather than being usage minus a running total of
	// held deltas: below a lending limit, how much of a change reaches the
	// parent depends on the node's usage at that moment, so a hold and its
	// later release can reach an ancestor in different amounts.
	work   Usage
	weight int64
	// decayed is the node's decayed usage, with usage decay on.
	decayed *DecayedUsage
}

func newNode(name string, groups []ResourceGroup, weight int64) *node {
	n := &node{name: name, own: map[FlavorResource]ResourceQuota{}, subtree: Usage{}, usage: Usage{}, work: Usage{}, weight: weight}
	for _, g := range groups {
		for _, f := range g.Flavors {
			for res, q := range f.Resources {
				n.own[FlavorResource{Flavor: f.Flavor, Resource: res}] = q
			}
		}
	}
	return n
}

// guaranteed is the part of the node's subtree quota it does not lend.
func (n *node) guaranteed(fr FlavorResource) int64 {
	q, ok := n.own[fr]
	if !ok || q.LendingLimit == nil || n.parent == nil {
		return 0
	}
	return max(0, n.subtree[fr]-*q.LendingLimit)
}

// computeSubtree fills subtree bottom-up.
func (n *node) computeSubtree() {
	for fr, q := range n.own {
		n.subtree[fr] = q.Nominal
	}
	for _, c := range n.children {
		c.computeSubtree()
		for fr, v := range c.subtree {
			n.subtree[fr] += v - c.guaranteed(fr)
		}
	}
}

// addUsage adds (or with a negative delta removes) usage at the node and
// bubbles to the parents whatever exceeds what each node guarantees itself.
func (n *node) addUsage(fr FlavorResource, delta int64) { n.add(fr, delta, false) }

// addReserve adds room held for a waiting preemptor: usage, as addUsage,
// but not work, so that held room makes nobody a borrower.
func (n *node) addReserve(fr FlavorResource, delta int64) { n.add(fr, delta, true) }

func (n *node) add(fr FlavorResource, delta int64, reserve bool) {
	bubble(n, fr, delta, func(x *node) Usage { return x.usage })
	if !reserve {
		bubble(n, fr, delta, func(x *node) Usage { return x.work })
	}
}

// bubble adds delta to the usage of(n) and passes up to each parent what
// exceeds what the node guarantees itself, before and after.
func bubble(n *node, fr FlavorResource, delta int64, of func(*node) Usage) {
	for x := n; x != nil && delta != 0; x = x.parent {
		u, g := of(x), x.guaranteed(fr)
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
func (n *node) available(fr FlavorResource) int64 {
	if n.parent == nil {
		return max(0, n.subtree[fr]-n.usage[fr])
	}
	g := n.guaranteed(fr)
	local := max(0, g-n.usage[fr])
	fromParent := n.parent.available(fr)
	if q, ok := n.own[fr]; ok && q.BorrowingLimit != nil {
		inParent := n.subtree[fr] - g
		usedInParent := max(0, n.usage[fr]-g)
		fromParent = min(fromParent, inParent-usedInParent+*q.BorrowingLimit)
	} else if !ok && n.queue != nil {
		return 0 // a queue has no quota at all for a flavor-resource it doesn't list
	}
	return local + max(0, fromParent)
}

// potential is what the node could use if nothing else in the tree were
// used: the bound preemption can reach.
func (n *node) potential(fr FlavorResource) int64 {
	if n.parent == nil {
		return n.subtree[fr]
	}
	if _, ok := n.own[fr]; !ok && n.queue != nil {
		return 0
	}
	g := n.guaranteed(fr)
	p := n.parent.potential(fr)
	if q, ok := n.own[fr]; ok && q.BorrowingLimit != nil {
		p = min(p, n.subtree[fr]-g+*q.BorrowingLimit)
	}
	return g + p
}

// borrowing reports whether the workloads under the node use more of fr
// than its subtree's quota: room held for waiting preemptors is not
// borrowed by anyone, and must not make a queue a reclaim target.
func (n *node) borrowing(fr FlavorResource) bool {
	return n.work[fr] > n.subtree[fr]
}

func (n *node) root() *node {
	r := n
	for r.parent != nil {
		r = r.parent
	}
	return r
}

// leaves lists the ClusterQueues under the node, by name.
func (n *node) leaves() []*QueueSnapshot {
	if n.queue != nil {
		return []*QueueSnapshot{n.queue}
	}
	var out []*QueueSnapshot
	for _, c := range n.children {
		out = append(out, c.leaves()...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
