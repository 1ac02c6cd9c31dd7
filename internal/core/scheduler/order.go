package scheduler

import (
	"container/heap"
	"sort"
	"sync"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/queue"
	"github.com/musterhq/muster/internal/core/quota"
)

// order is the sequence in which a cycle tries one ClusterQueue's pending
// workloads: highest priority and oldest first, or, under admission fair
// sharing (AdmissionFairSharing), in its LocalQueues' turns — and since
// every admission of the cycle adds to its LocalQueue's usage, the next
// turn is chosen again after each.
type order struct {
	// flat is the queue's workloads in priority order (no fair sharing).
	flat []*core.Workload
	// turns is the queue's LocalQueues taking turns (fair sharing).
	turns *queue.Turns
}

func newOrder(s *Snapshot, q *quota.QueueSnapshot, wls []*core.Workload) *order {
	if q.AdmissionFairSharing {
		return &order{turns: queue.NewTurns(wls, s.LocalQueueScore)}
	}
	flat := append([]*core.Workload(nil), wls...)
	sort.Slice(flat, func(i, j int) bool { return queue.Before(flat[i], flat[j]) })
	return &order{flat: flat}
}

// peek is the next workload to try, nil when none is left.
func (o *order) peek() *core.Workload {
	if o.turns != nil {
		return o.turns.Peek()
	}
	if len(o.flat) == 0 {
		return nil
	}
	return o.flat[0]
}

// pop removes wl, which peek returned: by its LocalQueue, since deciding
// it may have changed whose turn peek would find now.
func (o *order) pop(wl *core.Workload) {
	if o.turns != nil {
		o.turns.Pop(core.LocalQueueKey(wl))
		return
	}
	o.flat = o.flat[1:]
}

// orders builds the order of every queue with pending workloads.
func orders(s *Snapshot, heads map[string][]*core.Workload) map[string]*order {
	out := make(map[string]*order, len(heads))
	for cq, wls := range heads {
		if q := s.Queue(cq); q != nil {
			out[cq] = newOrder(s, q, wls)
		}
	}
	return out
}

// headHeap merges the queues' orders into one: the queue whose next
// workload comes first by priority and age is served next. Without
// admission fair sharing that is the global priority-then-age order.
type headHeap struct {
	names  []string
	orders map[string]*order
}

func newHeadHeap(os map[string]*order) *headHeap {
	h := &headHeap{orders: os}
	for name, o := range os {
		if o.peek() != nil {
			h.names = append(h.names, name)
		}
	}
	sort.Strings(h.names) // a deterministic start for equal heads
	heap.Init(h)
	return h
}

func (h *headHeap) Len() int { return len(h.names) }
func (h *headHeap) Less(i, j int) bool {
	a, b := h.orders[h.names[i]].peek(), h.orders[h.names[j]].peek()
	if queue.Before(a, b) != queue.Before(b, a) {
		return queue.Before(a, b)
	}
	return h.names[i] < h.names[j]
}
func (h *headHeap) Swap(i, j int) { h.names[i], h.names[j] = h.names[j], h.names[i] }
func (h *headHeap) Push(x any)    { h.names = append(h.names, x.(string)) }
func (h *headHeap) Pop() any {
	n := h.names[len(h.names)-1]
	h.names = h.names[:len(h.names)-1]
	return n
}

// head is the next workload and its queue's name; ok is false when no
// queue has any left. It stays the head until advance.
func (h *headHeap) head() (string, *core.Workload, bool) {
	if h.Len() == 0 {
		return "", nil, false
	}
	return h.names[0], h.orders[h.names[0]].peek(), true
}

// advance moves past the head wl, once it is decided: the decision may have
// changed what its queue serves next (its LocalQueue's usage grew), so
// the queue is placed again.
func (h *headHeap) advance(wl *core.Workload) {
	o := h.orders[h.names[0]]
	o.pop(wl)
	if o.peek() == nil {
		heap.Pop(h)
		return
	}
	heap.Fix(h, 0)
}

// InAdmissionOrder is a ClusterQueue's pending order as its cycles would
// try it: unchanged without admission fair sharing; with it, in its
// LocalQueues' turns, scored as the cache holds them now.
func InAdmissionOrder(c *quota.Cache, clusterQueue string, o queue.PendingOrder) queue.PendingOrder {
	if scores, ok := c.AdmissionScores(clusterQueue, o.LocalQueues()); ok {
		return o.InTurns(scores.Score, scores.Take)
	}
	return o
}

// AdmissionOrders is InAdmissionOrder for readers that ask again and
// again (the visibility API, the dashboard): the turns follow from the
// pending order and the LocalQueues' scores alone, so while neither
// changes a read reuses the last one's, at the cost of comparing one
// score per LocalQueue — as the plain order is sorted once per change.
type AdmissionOrders struct {
	Cache *quota.Cache

	mu   sync.Mutex
	last map[string]admissionOrder
}

// admissionOrder is one ClusterQueue's last order in turns, and what it
// was taken from.
type admissionOrder struct {
	from   queue.PendingOrder
	scores *quota.LocalQueueScores
	turns  queue.PendingOrder
}

// Order is InAdmissionOrder(a.Cache, clusterQueue, o).
func (a *AdmissionOrders) Order(clusterQueue string, o queue.PendingOrder) queue.PendingOrder {
	scores, ok := a.Cache.AdmissionScores(clusterQueue, o.LocalQueues())
	a.mu.Lock()
	last, found := a.last[clusterQueue]
	if !ok {
		// Deleted, or fair sharing turned off: what was kept goes.
		delete(a.last, clusterQueue)
	}
	a.forgetDeleted()
	a.mu.Unlock()
	if !ok {
		return o
	}
	if found && last.from.Same(o) && last.scores.Equal(scores) {
		return last.turns
	}
	taken := scores.Clone()
	turns := o.InTurns(scores.Score, scores.Take)
	a.mu.Lock()
	if a.last == nil {
		a.last = map[string]admissionOrder{}
	}
	a.last[clusterQueue] = admissionOrder{from: o, scores: taken, turns: turns}
	a.mu.Unlock()
	return turns
}

// forgetDeleted drops the orders of ClusterQueues the cache no longer
// has, so that a deleted queue's 100,000 workloads are not held. The
// caller holds a.mu.
func (a *AdmissionOrders) forgetDeleted() {
	for name := range a.last {
		if !a.Cache.HasClusterQueue(name) {
			delete(a.last, name)
		}
	}
}
