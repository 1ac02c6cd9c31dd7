package scheduler

import (
	"github.com/musterhq/muster/internal/core/queue"
	"github.com/musterhq/muster/internal/core/quota"
)

// pickFair runs the fair-sharing tournament from a node: at every cohort
// the child with the lowest share (of decayed usage, with decay on) wins
// (then the higher priority, then the older head), down to a ClusterQueue. It returns nil when no queue under
// the node has a candidate left.
func pickFair(s *Snapshot, n *quota.TreeNode, os map[string]*order) *quota.QueueSnapshot {
	if n.Queue != nil {
		if o := os[n.Queue.Name]; o != nil && o.peek() != nil {
			return n.Queue
		}
		return nil
	}
	var best *quota.QueueSnapshot
	var bestShare int64
	for _, c := range n.Children {
		q := pickFair(s, c, os)
		if q == nil {
			continue
		}
		share := s.FairShare(c)
		if best == nil || share < bestShare || (share == bestShare && queue.Before(os[q.Name].peek(), os[best.Name].peek())) {
			best, bestShare = q, share
		}
	}
	return best
}
