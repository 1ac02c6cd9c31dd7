package queue

import (
	"container/heap"
	"sort"
	"sync"

	"github.com/musterhq/muster/internal/core"
)

// Turns is one ClusterQueue's pending workloads by LocalQueue, each in
// priority order, and whose turn it is: the LocalQueue with workloads left
// whose score (weighted usage) is the lowest, ties going to the one whose
// head comes first by priority and age — Kueue's admission fair sharing.
// The scheduler's cycle and the order the visibility API and dashboard
// show both take turns through it, with their own scores.
type Turns struct {
	byLQ  map[string][]*core.Workload
	lqs   []string
	score func(localQueue string) float64
}

func NewTurns(wls []*core.Workload, score func(string) float64) *Turns {
	t := &Turns{byLQ: map[string][]*core.Workload{}, score: score}
	for _, wl := range wls {
		k := core.LocalQueueKey(wl)
		if _, ok := t.byLQ[k]; !ok {
			t.lqs = append(t.lqs, k)
		}
		t.byLQ[k] = append(t.byLQ[k], wl)
	}
	sort.Strings(t.lqs)
	for _, k := range t.lqs {
		l := t.byLQ[k]
		sort.Slice(l, func(i, j int) bool { return Before(l[i], l[j]) })
	}
	return t
}

// Next is the LocalQueue whose turn it is, "" when none has workloads.
func (t *Turns) Next() string {
	best := ""
	var bestScore float64
	for _, k := range t.lqs {
		l := t.byLQ[k]
		if len(l) == 0 {
			continue
		}
		score := t.score(k)
		if best == "" || score < bestScore || (score == bestScore && Before(l[0], t.byLQ[best][0])) {
			best, bestScore = k, score
		}
	}
	return best
}

// Peek is the head of the LocalQueue whose turn it is.
func (t *Turns) Peek() *core.Workload {
	if k := t.Next(); k != "" {
		return t.byLQ[k][0]
	}
	return nil
}

// Pop removes the head of a LocalQueue.
func (t *Turns) Pop(localQueue string) {
	t.byLQ[localQueue] = t.byLQ[localQueue][1:]
}

// InTurns is the order as a ClusterQueue's cycles would try it under
// admission fair sharing: LocalQueues take turns by score, each workload
// taken raising its LocalQueue's (take) as if it were admitted. The
// visibility API's positions and the dashboard come from it, so they
// follow the turns rather than priority alone (an estimate either way:
// who fits when decides).
//
// take, given the LocalQueue's key, may change the score of the taken
// workload's LocalQueue only: the LocalQueues are kept in a heap by score
// and head. The turns are taken as the order is read, under a lock, so a
// page of the first 1,000 positions of 100,000 costs 1,000 turns; score
// and take are called only then, and must not be used by the caller
// meanwhile. The order is the one Turns.Next takes, which the cycle uses.
func (o PendingOrder) InTurns(score func(localQueue string) float64, take func(localQueue string, wl *core.Workload)) PendingOrder {
	n := len(o.Workloads)
	return PendingOrder{turns: &takenTurns{
		heap: newTurnHeap(o.Workloads, score), score: score, take: take,
		// Never grown: a prefix handed to a reader stays valid while later
		// turns are appended.
		wls: make([]*core.Workload, 0, n), inLocalQueue: make([]int, 0, n),
	}}
}

// takenTurns is an order in turns, taken as far as it was read.
type takenTurns struct {
	mu           sync.Mutex
	heap         *turnHeap
	score        func(string) float64
	take         func(string, *core.Workload)
	wls          []*core.Workload
	inLocalQueue []int
	localQueues  []string
}

// upTo takes turns until n workloads are in order, or all are, and returns
// the order so far.
func (t *takenTurns) upTo(n int) ([]*core.Workload, []int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.heap
	for len(t.wls) < n && h.Len() > 0 {
		lq := h.turns[0]
		wl := lq.wls[lq.taken]
		if lq.taken == 0 {
			t.localQueues = append(t.localQueues, lq.key)
		}
		t.wls = append(t.wls, wl)
		t.inLocalQueue = append(t.inLocalQueue, lq.taken)
		lq.taken++
		t.take(lq.key, wl)
		if lq.taken == len(lq.wls) {
			heap.Pop(h)
			continue
		}
		lq.score = t.score(lq.key)
		heap.Fix(h, 0)
	}
	return t.wls, t.inLocalQueue
}

// turn is one LocalQueue's workloads in queue order, how many are taken
// (the next one's position in its LocalQueue), and its score.
type turn struct {
	key   string
	wls   []*core.Workload
	taken int
	score float64
}

// turnHeap orders LocalQueues as Turns.Next chooses: lowest score, then
// the head that comes first (Before is a total order, so no two tie).
type turnHeap struct{ turns []*turn }

// newTurnHeap groups wls, which are in queue order, by LocalQueue.
func newTurnHeap(wls []*core.Workload, score func(string) float64) *turnHeap {
	byLQ := map[localQueueRef]*turn{}
	h := &turnHeap{}
	for _, wl := range wls {
		t := byLQ[localQueueOf(wl)]
		if t == nil {
			k := core.LocalQueueKey(wl)
			t = &turn{key: k, score: score(k)}
			byLQ[localQueueOf(wl)] = t
			h.turns = append(h.turns, t)
		}
		t.wls = append(t.wls, wl)
	}
	heap.Init(h)
	return h
}

func (h *turnHeap) Len() int { return len(h.turns) }
func (h *turnHeap) Less(i, j int) bool {
	a, b := h.turns[i], h.turns[j]
	if a.score != b.score {
		return a.score < b.score
	}
	return Before(a.wls[a.taken], b.wls[b.taken])
}
func (h *turnHeap) Swap(i, j int) { h.turns[i], h.turns[j] = h.turns[j], h.turns[i] }
func (h *turnHeap) Push(x any)    { h.turns = append(h.turns, x.(*turn)) }
func (h *turnHeap) Pop() any {
	t := h.turns[len(h.turns)-1]
	h.turns = h.turns[:len(h.turns)-1]
	return t
}
