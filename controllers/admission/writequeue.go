package admission

import (
	"math"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// admissionWriters is how many admission writes run at once while the API
// server answers promptly. The cycle does not wait for them: the cache
// already holds the assumed admissions, so the next cycle decides on top
// of them while they are written.
//
// When the API server is slow to answer (another client's burst: the
// large-scale mix's creation of 50,000 Workloads took each write 2–7 s),
// 16 writers write only 16/latency a second, far under the client's rate
// limit (measured: 3 admissions/s for three minutes at QPS 50, while Kueue,
// whose admission writes each get a goroutine, wrote 50/s). The writers
// then grow to what Little's law asks to keep the client's rate busy —
// rate × latency — up to maxAdmissionWriters. They never write faster than
// the client's rate limit lets them: more of them only wait less in line.
const (
	admissionWriters    = 16
	maxAdmissionWriters = 256
	// maxWriteRate stands for the client's rate when it is unlimited (or
	// effectively so), in the writers' sizing only.
	maxWriteRate = 1000
)

// A cycle decides no more admissions than the writers can write in about
// writeHorizon (at the rate they wrote over the last second, and at least
// twice the writers there are now, so that every writer stays busy while
// the next cycle runs). When the client's rate limit holds the writes back,
// what is admitted next is thus decided when there is room to write it,
// among the workloads pending then, in priority order — not queued behind
// admissions decided a minute before they can be written, which a
// higher-priority workload arriving meanwhile would have to wait for. A
// cycle stopped at the bound runs again once half of what was queued is
// written, so cycles stay few however fast the writes go.
const (
	writeHorizon = time.Second
	rateBuckets  = 10
	rateBucket   = writeHorizon / rateBuckets
)

// writeQueue runs the admission writes the cycles decide, in the order
// decided (the cycles' priority order), at most writers() at once.
type writeQueue struct {
	clock clock.PassiveClock
	// inflight counts the queued and running writes, for drain.
	inflight sync.WaitGroup
	// wake runs a cycle.
	wake func()
	// rate is the client's rate limit, and latency how long the API server
	// takes to answer a write now (nil: promptly), for writers().
	rate    float64
	latency *WriteLatency

	mu sync.Mutex
	// waiting holds the admissions decided and not started yet, running
	// counts those started and not finished: queued() are both.
	waiting []func()
	running int
	// stopped is set when a cycle stopped at the bound.
	stopped bool
	// written counts the writes finished per rateBucket of the last
	// writeHorizon; bucket holds each slot's bucket number.
	written [rateBuckets]int
	bucket  [rateBuckets]int64
}

func newWriteQueue(clk clock.PassiveClock, wake func(), clientQPS float32, latency *WriteLatency) *writeQueue {
	return &writeQueue{clock: clk, wake: wake, rate: float64(clientQPS), latency: latency}
}

// writers is how many writes may run at once: admissionWriters, or as many
// as the client's rate keeps busy at the API server's current latency.
func (q *writeQueue) writers() int {
	rate := q.rate
	if rate <= 0 || rate > maxWriteRate {
		rate = maxWriteRate
	}
	need := int(math.Ceil(rate * q.latency.Latency().Seconds()))
	return min(max(admissionWriters, need), maxAdmissionWriters)
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
	queued := q.queued()
	if queued > depth/2 {
		return 0
	}
	return depth - queued
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
	return max(2*q.writers(), n)
}

// stoppedAtBudget makes the writers run a cycle once half the queue is
// written: the last cycle stopped at its budget, so more may be admissible.
func (q *writeQueue) stoppedAtBudget() {
	q.mu.Lock()
	q.stopped = true
	wake := q.wakeIfDrained()
	q.mu.Unlock()
	if wake {
		q.wake()
	}
}

// wakeIfDrained reports, and clears, a waiting cycle once half the queue
// is written; q.mu held.
func (q *writeQueue) wakeIfDrained() bool {
	if !q.stopped || q.queued() > q.depth()/2 {
		return false
	}
	q.stopped = false
	return true
}

// submit queues one admission write; writes start in the order submitted.
func (q *writeQueue) submit(write func()) {
	q.inflight.Add(1)
	q.mu.Lock()
	q.waiting = append(q.waiting, write)
	q.startLocked()
	q.mu.Unlock()
}

// queued counts the admissions decided and not yet written; q.mu held.
func (q *writeQueue) queued() int { return len(q.waiting) + q.running }

// startLocked starts waiting writes while fewer than writers() run; q.mu
// held.
func (q *writeQueue) startLocked() {
	for n := q.writers(); len(q.waiting) > 0 && q.running < n; {
		write := q.waiting[0]
		q.waiting[0] = nil
		q.waiting = q.waiting[1:]
		q.running++
		go q.run(write)
	}
}

func (q *writeQueue) run(write func()) {
	defer q.inflight.Done()
	write()
	q.finished()
}

func (q *writeQueue) finished() {
	now := q.clock.Now().UnixNano() / int64(rateBucket)
	q.mu.Lock()
	q.running--
	i := now % rateBuckets
	if q.bucket[i] != now {
		q.bucket[i], q.written[i] = now, 0
	}
	q.written[i]++
	q.startLocked()
	wake := q.wakeIfDrained()
	q.mu.Unlock()
	if wake {
		q.wake()
	}
}

// drain waits for the queued writes.
func (q *writeQueue) drain() { q.inflight.Wait() }
