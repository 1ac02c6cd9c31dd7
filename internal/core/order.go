package core

import (
	"container/heap"
	"sort"
)

// order is the sequence in which a cycle tries one ClusterQueue's pending
// workloads: highest priority and oldest first, or, under admission fair
// sharing (AdmissionFairSharing), first from the LocalQueue that has used
// the least — and since every admission of the cycle adds to its
// LocalQueue's usage, the next one is chosen again after each.
type order struct {
	s    *Snapshot
	fair bool
	// flat is the queue's workloads in priority order (fair false).
	flat []*Workload
	// byLQ holds each LocalQueue's workloads in priority order, and lqs
	// their keys, sorted (fair true).
	byLQ map[string][]*Workload
	lqs  []string
}

func newOrder(s *Snapshot, q *QueueSnapshot, wls []*Workload) *order {
	o := &order{s: s, fair: q.AdmissionFairSharing}
	if !o.fair {
		o.flat = append([]*Workload(nil), wls...)
		sort.Slice(o.flat, func(i, j int) bool { return before(o.flat[i], o.flat[j]) })
		return o
	}
	o.byLQ = map[string][]*Workload{}
	for _, wl := range wls {
		k := localQueueKey(wl)
		if _, ok := o.byLQ[k]; !ok {
			o.lqs = append(o.lqs, k)
		}
		o.byLQ[k] = append(o.byLQ[k], wl)
	}
	sort.Strings(o.lqs)
	for _, k := range o.lqs {
		l := o.byLQ[k]
		sort.Slice(l, func(i, j int) bool { return before(l[i], l[j]) })
	}
	return o
}

// peek is the next workload to try, nil when none is left.
func (o *order) peek() *Workload {
	if !o.fair {
		if len(o.flat) == 0 {
			return nil
		}
		return o.flat[0]
	}
	if k := o.nextLQ(); k != "" {
		return o.byLQ[k][0]
	}
	return nil
}

// pop removes wl, which peek returned: by its LocalQueue, since deciding
// it may have changed which LocalQueue peek would pick now.
func (o *order) pop(wl *Workload) {
	if !o.fair {
		o.flat = o.flat[1:]
		return
	}
	k := localQueueKey(wl)
	o.byLQ[k] = o.byLQ[k][1:]
}

// nextLQ is the LocalQueue with workloads left that has used the least
// (ties: whose head comes first by priority and age), as Kueue's admission
// fair sharing orders them.
func (o *order) nextLQ() string {
	best := ""
	var bestScore float64
	for _, k := range o.lqs {
		l := o.byLQ[k]
		if len(l) == 0 {
			continue
		}
		score := o.s.lqScore(k)
		if best == "" || score < bestScore || (score == bestScore && before(l[0], o.byLQ[best][0])) {
			best, bestScore = k, score
		}
	}
	return best
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
