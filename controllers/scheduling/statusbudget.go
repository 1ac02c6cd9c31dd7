package scheduling

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// Queue status writes share a budget per kind (ClusterQueue, LocalQueue):
// queueStatusRate writes a second, queueStatusBurst at once. A cluster with
// a few queues sees every change within statusCoalesceDelay as before; one
// with a thousand busy queues gets each refreshed about every
// 1000/queueStatusRate seconds instead of a thousand writes a second —
// nearly one per admitted workload, for counts nobody reads that often,
// taken from the client's rate limit the admissions need (the figures are
// in docs/performance.md). A change of a queue's conditions is written at
// once, whatever the budget.
const (
	queueStatusRate  = 10
	queueStatusBurst = 20
)

// statusBudget hands out turns to write a queue's status. A queue that
// must wait is given a time and keeps it: its reconcile comes back then
// (RequeueAfter) and writes whatever its status is by that time.
type statusBudget struct {
	clock   clock.PassiveClock
	mu      sync.Mutex
	limiter *rate.Limiter
	// turns maps a queue to when its deferred write may go.
	turns map[string]time.Time
}

func newStatusBudget(clk clock.PassiveClock) *statusBudget {
	return &statusBudget{clock: clk, limiter: rate.NewLimiter(queueStatusRate, queueStatusBurst), turns: map[string]time.Time{}}
}

// turn reports how long the status write of key must wait; 0 means write
// now. urgent writes go now and still count against the budget.
func (b *statusBudget) turn(key string, urgent bool) time.Duration {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if at, ok := b.turns[key]; ok {
		if urgent || !now.Before(at) {
			delete(b.turns, key) // its reserved token pays for this write
			return 0
		}
		return at.Sub(now)
	}
	if urgent {
		b.limiter.AllowN(now, 1)
		return 0
	}
	d := b.limiter.ReserveN(now, 1).DelayFrom(now)
	if d > 0 {
		b.turns[key] = now.Add(d)
	}
	return d
}

// queueStatusDelay is how long workload changes are gathered before a
// queue's status is looked at again, with n queues of its kind: 1 s for a
// few, n/queueStatusRate seconds for many, so that the reconciles match
// what the budget lets be written. Computing a ClusterQueue's status takes
// a snapshot of its cohort tree, so reconciling each of many queues every
// second, mostly to find its turn not come yet, would cost more than the
// scheduling itself. Changes of the queues themselves, their flavors or
// topologies are not delayed.
func queueStatusDelay(n int) time.Duration {
	return max(statusCoalesceDelay, time.Duration(n)*time.Second/queueStatusRate)
}

// turnFor is turn for a status whose conditions go from was to now: a
// change of them is urgent.
func (b *statusBudget) turnFor(key string, was, now []metav1.Condition) time.Duration {
	return b.turn(key, !equality.Semantic.DeepEqual(was, now))
}

// forget drops a deleted queue's turn.
func (b *statusBudget) forget(key string) {
	b.mu.Lock()
	delete(b.turns, key)
	b.mu.Unlock()
}
