package core

import (
	"math"
	"math/bits"
)

// share is the node's DRF share in thousandths, divided by its weight: the
// largest, over flavor-resources, of what its workloads use beyond its own
// subtree quota over what its parent's pool holds. 0 means it borrows
// nothing; a node of weight 0 that borrows has the largest share possible.
// Room held for a waiting preemptor or a starving workload is not use
// (work, not usage): holding it must not make a queue look like a
// borrower to the tournament or to fair-sharing preemption.
func (n *node) share() int64 {
	if n.parent == nil {
		return 0
	}
	var dominant int64
	for fr, used := range n.work {
		borrowed := used - n.subtree[fr]
		pool := n.parent.subtree[fr]
		if borrowed <= 0 || pool <= 0 {
			continue
		}
		dominant = max(dominant, mulDiv(borrowed, 1000, pool))
	}
	if dominant == 0 {
		return 0
	}
	if n.weight <= 0 {
		return math.MaxInt64
	}
	return mulDiv(dominant, 1000, n.weight)
}

// mulDiv is a*b/c for non-negative a, b and positive c without overflowing
// in between (a can be a byte count near the int64 limit), saturating at
// MaxInt64.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(min(q, math.MaxInt64))
}

// pickFair runs the fair-sharing tournament from a root: at every cohort the
// child with the lowest share (of decayed usage, with decay on) wins (then the higher priority, then the
// older head), down to a ClusterQueue. It returns nil when no queue under
// the node has a candidate left.
func (n *node) pickFair(os map[string]*order, decay *usageDecay) *QueueSnapshot {
	if n.queue != nil {
		if o := os[n.queue.Name]; o != nil && o.peek() != nil {
			return n.queue
		}
		return nil
	}
	var best *QueueSnapshot
	var bestShare int64
	for _, c := range n.children {
		q := c.pickFair(os, decay)
		if q == nil {
			continue
		}
		share := c.fairShare(decay)
		if best == nil || share < bestShare || (share == bestShare && before(os[q.Name].peek(), os[best.Name].peek())) {
			best, bestShare = q, share
		}
	}
	return best
}
