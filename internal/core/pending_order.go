package core

import (
	"slices"
	"time"
)

// PendingOrder is a ClusterQueue's pending workloads in queue order.
type PendingOrder struct {
	// Workloads are queued and parked workloads alike, ordered as the
	// queue orders them (priority, then age): the order a StrictFIFO queue
	// admits in, and the order a BestEffortFIFO queue tries them.
	Workloads []*Workload
}

// Pending returns a ClusterQueue's pending workloads in queue order, and
// false if the ClusterQueue is unknown. The order is sorted once per change
// of the queue and shared: callers must not modify it. The sort runs
// outside the lock, so reading 100,000 positions does not stall a cycle.
func (q *Queues) Pending(clusterQueue string) (PendingOrder, bool) {
	q.mu.Lock()
	pq, ok := q.queues[clusterQueue]
	if !ok {
		q.mu.Unlock()
		return PendingOrder{}, false
	}
	if pq.sorted != nil && pq.sortedAt == pq.version {
		defer q.mu.Unlock()
		return PendingOrder{Workloads: pq.sorted}, true
	}
	version, all := pq.version, pq.all()
	q.mu.Unlock()

	slices.SortFunc(all, compareWorkloads)
	q.mu.Lock()
	if pq.version == version {
		pq.sorted, pq.sortedAt = all, version
	}
	q.mu.Unlock()
	return PendingOrder{Workloads: all}, true
}

// WaitingForClusterQueue returns a LocalQueue's pending workloads that
// wait for their queue chain (the LocalQueue or its ClusterQueue does not
// exist yet), in queue order.
func (q *Queues) WaitingForClusterQueue(namespace, localQueue string) []*Workload {
	q.mu.Lock()
	var out []*Workload
	for _, wl := range q.orphans {
		if wl.Namespace == namespace && wl.Queue == localQueue {
			out = append(out, wl)
		}
	}
	q.mu.Unlock()
	slices.SortFunc(out, compareWorkloads)
	return out
}

// Position is a pending workload with its place in its ClusterQueue and in
// its LocalQueue, both from 0.
type Position struct {
	Workload                     *Workload
	InClusterQueue, InLocalQueue int
}

// Page returns the positions of the workloads from offset, at most limit,
// that keep returns true for (nil keeps all). Positions in the LocalQueue
// count every workload of that LocalQueue before, kept or not.
func (o PendingOrder) Page(offset, limit int, keep func(*Workload) bool) []Position {
	out := make([]Position, 0, min(limit, len(o.Workloads)))
	perLocalQueue := map[string]int{}
	kept := 0
	for i, wl := range o.Workloads {
		if len(out) == limit {
			break
		}
		lq := localQueueKey(wl)
		inLQ := perLocalQueue[lq]
		perLocalQueue[lq]++
		if keep != nil && !keep(wl) {
			continue
		}
		if kept++; kept > offset {
			out = append(out, Position{Workload: wl, InClusterQueue: i, InLocalQueue: inLQ})
		}
	}
	return out
}

func compareWorkloads(a, b *Workload) int {
	switch {
	case before(a, b):
		return -1
	case before(b, a):
		return 1
	}
	return 0
}

// OldestPending is the creation time of a ClusterQueue's oldest pending
// workload (zero if none): what an alert on workloads waiting too long
// reads. It walks the queue, as often as the queue's status is refreshed.
func (q *Queues) OldestPending(clusterQueue string) time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	pq := q.queues[clusterQueue]
	if pq == nil {
		return time.Time{}
	}
	var oldest time.Time
	for _, wl := range pq.heap.items {
		if oldest.IsZero() || wl.Created.Before(oldest) {
			oldest = wl.Created
		}
	}
	for _, wl := range pq.parked {
		if oldest.IsZero() || wl.Created.Before(oldest) {
			oldest = wl.Created
		}
	}
	return oldest
}
