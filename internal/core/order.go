package core

import (
	"container/heap"
	"sort"
)

// order is the sequence in which a cycle tries one ClusterQueue's pending
// workloads: highest priority and oldest first, or, under admission fair
// sharing (AdmissionFairSharing), in its LocalQueues' turns — and since
// every admission of the cycle adds to its LocalQueue's usage, the next
// turn is chosen again after each.
type order struct {
	// flat is the queue's workloads in priority order (no fair sharing).
	flat []*Workload
	// turns is the queue's LocalQueues taking turns (fair sharing).
	turns *lqTurns
}

func newOrder(s *Snapshot, q *QueueSnapshot, wls []*Workload) *order {
	if q.AdmissionFairSharing {
		return &order{turns: newLQTurns(wls, s.lqScore)}
	}
	flat := append([]*Workload(nil), wls...)
	sort.Slice(flat, func(i, j int) bool { return before(flat[i], flat[j]) })
	return &order{flat: flat}
}

// peek is the next workload to try, nil when none is left.
func (o *order) peek() *Workload {
	if o.turns != nil {
		return o.turns.peek()
	}
	if len(o.flat) == 0 {
		return nil
	}
	return o.flat[0]
}

// pop removes wl, which peek returned: by its LocalQueue, since deciding
// it may have changed whose turn peek would find now.
func (o *order) pop(wl *Workload) {
	if o.turns != nil {
		o.turns.pop(localQueueKey(wl))
		return
	}
	o.flat = o.flat[1:]
}

// lqTurns is one ClusterQueue's pending workloads by LocalQueue, each in
// priority order, and whose turn it is: the LocalQueue with workloads left
// whose score (weighted usage) is the lowest, ties going to the one whose
// head comes first by priority and age — Kueue's admission fair sharing.
// The scheduler's cycle and the order the visibility API and dashboard
// show both take turns through it, with their own scores.
type lqTurns struct {
	byLQ  map[string][]*Workload
	lqs   []string
	score func(localQueue string) float64
}

func newLQTurns(wls []*Workload, score func(string) float64) *lqTurns {
	t := &lqTurns{byLQ: map[string][]*Workload{}, score: score}
	for _, wl := range wls {
		k := localQueueKey(wl)
		if _, ok := t.byLQ[k]; !ok {
			t.lqs = append(t.lqs, k)
		}
		t.byLQ[k] = append(t.byLQ[k], wl)
	}
	sort.Strings(t.lqs)
	for _, k := range t.lqs {
		l := t.byLQ[k]
		sort.Slice(l, func(i, j int) bool { return before(l[i], l[j]) })
	}
	return t
}

// next is the LocalQueue whose turn it is, "" when none has workloads.
func (t *lqTurns) next() string {
	best := ""
	var bestScore float64
	for _, k := range t.lqs {
		l := t.byLQ[k]
		if len(l) == 0 {
			continue
		}
		score := t.score(k)
		if best == "" || score < bestScore || (score == bestScore && before(l[0], t.byLQ[best][0])) {
			best, bestScore = k, score
		}
	}
	return best
}

// peek is the head of the LocalQueue whose turn it is.
func (t *lqTurns) peek() *Workload {
	if k := t.next(); k != "" {
		return t.byLQ[k][0]
	}
	return nil
}

// pop removes the head of a LocalQueue.
func (t *lqTurns) pop(localQueue string) {
	t.byLQ[localQueue] = t.byLQ[localQueue][1:]
}

// orders builds the order of every queue with pending workloads.
func orders(s *Snapshot, heads map[string][]*Workload) map[string]*order {
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
	if before(a, b) != before(b, a) {
		return before(a, b)
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
func (h *headHeap) head() (string, *Workload, bool) {
	if h.Len() == 0 {
		return "", nil, false
	}
	return h.names[0], h.orders[h.names[0]].peek(), true
}

// advance moves past the head wl, once it is decided: the decision may have
// changed what its queue serves next (its LocalQueue's usage grew), so
// the queue is placed again.
func (h *headHeap) advance(wl *Workload) {
	o := h.orders[h.names[0]]
	o.pop(wl)
	if o.peek() == nil {
		heap.Pop(h)
		return
	}
	heap.Fix(h, 0)
}
