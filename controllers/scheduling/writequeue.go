package scheduling

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// admissionWriters bounds the admission writes in flight. The cycle does
// not wait for them: the cache already holds the assumed admissions, so
// the next cycle decides on top of them while they are written.
const admissionWriters = 16

// A cycle decides no more admissions than the writers can write in about
// writeHorizon (at the rate they wrote over the last second, and at least
// twice admissionWriters, so that every writer stays busy while the next
// cycle runs). When the client's rate limit holds the writes back,
// what is admitted next is thus decided when there is room to write it,
// among the workloads pending then, in priority order — not queued behind
// admissions decided a minute before they can be written (measured on
// Kueue's large-scale mix at QPS 50 with no such bound: medium workloads
// arriving behind 3,000 queued decisions waited for all of them, p99 2x
// Kueue's). A cycle stopped at the bound runs again once half of what was
// queued is written, so cycles stay few however fast the writes go.
const (
	writeHorizon = time.Second
	rateBuckets  = 10
	rateBucket   = writeHorizon / rateBuckets
)

// writeQueue runs the admission writes the cycles decide.
type writeQueue struct {
	clock clock.PassiveClock
	// slots holds one token per write in flight; inflight counts the
	// queued and running writes, for drain.
	slots    chan struct{}
	inflight sync.WaitGroup
	// wake runs a cycle.
	wake func()

	mu sync.Mutex
	// queued counts the admissions decided and not yet written.
	queued int
	// waiting is set when a cycle stopped at the bound.
	waiting bool
	// written counts the writes finished per rateBucket of the last
	// writeHorizon; bucket holds each slot's bucket number.
	written [rateBuckets]int
	bucket  [rateBuckets]int64
}

func newWriteQueue(clk clock.PassiveClock, wake func()) *writeQueue {
	return &writeQueue{clock: clk, slots: make(chan struct{}, admissionWriters), wake: wake}
}

// budget is how many admissions a cycle may decide now: none while more
// than half the queue is still to be written (the cycle would cost a pass
// over every pending workload for a few admissions; measured on the
// large-scale mix at QPS 50, cycles run on every arrival took 0.8 of a
// core); the writers run the next cycle once it drains to half.
func (q *writeQueue) budget() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	depth := q.depth()
	if q.queued > depth/2 {
		return 0
	}
	return depth - q.queued
}

// depth is how many decided admissions may wait to be written; q.mu held.
func (q *writeQueue) depth() int {
	now := q.clock.Now().UnixNano() / int64(rateBucket)
	n := 0
	for i, b := range q.bucket {
		if now-b < rateBuckets {
			n += q.written[i]
		}
	}
	return max(2*admissionWriters, n)
}

// stoppedAtBudget makes the writers run a cycle once half the queue is
// written: the last cycle stopped at its budget, so more may be admissible.
func (q *writeQueue) stoppedAtBudget() {
	q.mu.Lock()
	q.waiting = true
	wake := q.wakeIfDrained()
	q.mu.Unlock()
	if wake {
		q.wake()
	}
}

// wakeIfDrained reports, and clears, a waiting cycle once half the queue
// is written; q.mu held.
func (q *writeQueue) wakeIfDrained() bool {
	if !q.waiting || q.queued > q.depth()/2 {
		return false
	}
	q.waiting = false
	return true
}

// submit queues one admission write. Writes start in the order submitted
// (a channel's waiting senders proceed first in, first out), i.e. in the
// cycles' priority order.
func (q *writeQueue) submit(write func()) {
	q.mu.Lock()
	q.queued++
	q.mu.Unlock()
	q.inflight.Add(1)
	go func() {
		defer q.inflight.Done()
		q.slots <- struct{}{}
		write()
		<-q.slots
		q.finished()
	}()
}

func (q *writeQueue) finished() {
	now := q.clock.Now().UnixNano() / int64(rateBucket)
	q.mu.Lock()
	q.queued--
	i := now % rateBuckets
	if q.bucket[i] != now {
		q.bucket[i], q.written[i] = now, 0
	}
	q.written[i]++
	wake := q.wakeIfDrained()
	q.mu.Unlock()
	if wake {
		q.wake()
	}
}

// drain waits for the queued writes.
func (q *writeQueue) drain() { q.inflight.Wait() }
