package queue

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/core"
)

// PendingOrder is a ClusterQueue's pending workloads in queue order.
type PendingOrder struct {
	// Workloads are queued and parked workloads alike, ordered as the
	// queue orders them (priority, then age): the order a StrictFIFO queue
	// admits in, and the order a BestEffortFIFO queue tries them.
	Workloads []*core.Workload
	// inLocalQueue is each workload's position in its LocalQueue.
	inLocalQueue []int
	// localQueues are the keys (namespace/name) of the LocalQueues the
	// workloads come from, in order of their first workload.
	localQueues []string
	// turns, set by InTurns, orders the workloads as they are read;
	// Workloads is then empty.
	turns *takenTurns
}

// NewPendingOrder orders workloads as a queue does and numbers them in
// their LocalQueues.
func NewPendingOrder(wls []*core.Workload) PendingOrder {
	wls = slices.Clone(wls)
	slices.SortFunc(wls, compareWorkloads)
	return numbered(wls)
}

// numbered is an order of ordered workloads, numbered within their
// LocalQueues.
func numbered(wls []*core.Workload) PendingOrder {
	o := PendingOrder{Workloads: wls}
	o.inLocalQueue, o.localQueues = localQueuePositions(wls)
	return o
}

// localQueuePositions numbers ordered workloads within their LocalQueues,
// and lists the LocalQueues.
func localQueuePositions(wls []*core.Workload) ([]int, []string) {
	next := map[localQueueRef]int{}
	out := make([]int, len(wls))
	var lqs []string
	for i, wl := range wls {
		k := localQueueOf(wl)
		n, seen := next[k]
		if !seen {
			lqs = append(lqs, core.LocalQueueKey(wl))
		}
		out[i] = n
		next[k] = n + 1
	}
	return out, lqs
}

// LocalQueues are the keys (namespace/name) of the LocalQueues the
// order's workloads come from. Callers must not modify them.
func (o PendingOrder) LocalQueues() []string {
	if o.turns != nil {
		o.turns.upTo(math.MaxInt)
		o.turns.mu.Lock()
		defer o.turns.mu.Unlock()
		return o.turns.localQueues
	}
	if o.localQueues == nil && len(o.Workloads) > 0 {
		_, o.localQueues = localQueuePositions(o.Workloads)
	}
	return o.localQueues
}

// Same reports whether two orders are one: the order a queue shares
// between its changes (Queues.Pending), so what is derived from one can
// be kept for the other.
func (o PendingOrder) Same(other PendingOrder) bool {
	if o.turns != nil || other.turns != nil {
		return o.turns == other.turns
	}
	return len(o.Workloads) == len(other.Workloads) && (len(o.Workloads) == 0 || &o.Workloads[0] == &other.Workloads[0])
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
	if pq.sorted.Workloads != nil && pq.sortedAt == pq.version {
		defer q.mu.Unlock()
		return pq.sorted, true
	}
	version, all := pq.version, pq.all()
	q.mu.Unlock()

	order := NewPendingOrder(all)
	q.mu.Lock()
	if pq.version == version {
		pq.sorted, pq.sortedAt = order, version
	}
	q.mu.Unlock()
	return order, true
}

// WaitingForClusterQueue returns a LocalQueue's pending workloads that
// wait for their queue chain (the LocalQueue or its ClusterQueue does not
// exist yet), in queue order.
func (q *Queues) WaitingForClusterQueue(namespace, localQueue string) []*core.Workload {
	q.mu.Lock()
	var out []*core.Workload
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
	Workload                     *core.Workload
	InClusterQueue, InLocalQueue int
}

// Page returns the positions of the workloads from offset, at most limit,
// that keep returns true for (nil keeps all). Positions in the LocalQueue
// count every workload of that LocalQueue before, kept or not. The
// positions were numbered with the order, so a page costs its length (and,
// filtered, one call of keep per workload before its end).
func (o PendingOrder) Page(offset, limit int, keep func(*core.Workload) bool) []Position {
	if keep == nil {
		wls, inLQ := o.prefix(offset + min(limit, math.MaxInt-offset))
		out := make([]Position, 0, max(0, min(limit, len(wls)-offset)))
		for i := offset; i < len(wls) && len(out) < limit; i++ {
			out = append(out, Position{Workload: wls[i], InClusterQueue: i, InLocalQueue: inLQ[i]})
		}
		return out
	}
	out := []Position{}
	kept := 0
	wls, inLQ := o.prefix(pageChunk)
	for i := 0; len(out) < limit; i++ {
		if i == len(wls) {
			if wls, inLQ = o.prefix(2 * len(wls)); i == len(wls) {
				break
			}
		}
		if !keep(wls[i]) {
			continue
		}
		if kept++; kept > offset {
			out = append(out, Position{Workload: wls[i], InClusterQueue: i, InLocalQueue: inLQ[i]})
		}
	}
	return out
}

// pageChunk is how far a filtered page first takes an order in turns; it
// doubles as the page reads on.
const pageChunk = 1024

// prefix returns the first n workloads of the order (all, if fewer) and
// their positions in their LocalQueues.
func (o PendingOrder) prefix(n int) ([]*core.Workload, []int) {
	if o.turns != nil {
		return o.turns.upTo(n)
	}
	inLQ := o.inLocalQueue
	if inLQ == nil {
		inLQ, _ = localQueuePositions(o.Workloads)
	}
	n = min(n, len(o.Workloads))
	return o.Workloads[:n], inLQ[:n]
}

// Ordered returns every workload of the order, in order.
func (o PendingOrder) Ordered() []*core.Workload {
	wls, _ := o.prefix(math.MaxInt)
	return wls
}

// compareWorkloads is before as a three-way comparison, in one pass.
func compareWorkloads(a, b *core.Workload) int {
	if a.Priority != b.Priority {
		return cmp.Compare(b.Priority, a.Priority)
	}
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return strings.Compare(a.Key, b.Key)
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
