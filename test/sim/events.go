package sim

import (
	"container/heap"
	"time"
)

// eventKind orders the events of one instant: what frees quota first, then
// what arrives, then the samplers, so a cycle at that instant sees them all.
type eventKind int

const (
	evComplete eventKind = iota
	evArrive
	evWake
	evDecaySample
	evRecord
)

// event is something that happens at a virtual instant (an offset from the
// trace's start).
type event struct {
	at   time.Duration
	kind eventKind
	// job indexes the engine's jobs (evComplete, evArrive); attempt is the
	// admission a completion belongs to, so a preempted run's completion
	// is ignored.
	job, attempt int
	// seq breaks ties in the order events were pushed: the same trace
	// always replays in the same order.
	seq uint64
}

// eventQueue is a min-heap of events by (at, kind, seq).
type eventQueue struct {
	items []event
	seq   uint64
}

func (q *eventQueue) Len() int { return len(q.items) }
func (q *eventQueue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}
func (q *eventQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *eventQueue) Push(x any)    { q.items = append(q.items, x.(event)) }
func (q *eventQueue) Pop() any {
	last := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return last
}

// push schedules e.
func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	heap.Push(q, e)
}

// next is the time of the earliest event, if any.
func (q *eventQueue) next() (time.Duration, bool) {
	if len(q.items) == 0 {
		return 0, false
	}
	return q.items[0].at, true
}

// popAt removes and returns every event at instant at, in order.
func (q *eventQueue) popAt(at time.Duration) []event {
	var out []event
	for len(q.items) > 0 && q.items[0].at == at {
		out = append(out, heap.Pop(q).(event))
	}
	return out
}
