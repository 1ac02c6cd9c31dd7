package quota

import (
	"math"
	"math/bits"
)

// Share is the node's DRF Share in thousandths, divided by its weight: the
// largest, over flavor-resources, of what its workloads use beyond its own
// subtree quota over what its parent's pool holds. 0 means it borrows
// nothing; a node of weight 0 that borrows has the largest Share possible.
// Room held for a waiting preemptor or a starving workload is not use
// (work, not usage): holding it must not make a queue look like a
// borrower to the tournament or to fair-sharing preemption.
func (n *TreeNode) Share() int64 {
	if n.Parent == nil {
		return 0
	}
	var dominant int64
	for fr, used := range n.Work {
		borrowed := used - n.Subtree[fr]
		pool := n.Parent.Subtree[fr]
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
