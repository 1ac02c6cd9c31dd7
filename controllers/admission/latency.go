package admission

import (
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// WriteLatency follows how long the API server takes to answer the
// manager's writes. It wraps the transport of the manager's rest.Config,
// which client-go calls after its rate limiter: the time a write waits for
// the client's QPS is not counted, only the server's answer. The admission
// writers size themselves by it (writeQueue.writers).
type WriteLatency struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	ewma  time.Duration
}

// writeLatencyWeight is the weight of each new write in the moving average:
// a burst of slow answers moves it within tens of writes.
const writeLatencyWeight = 0.2

// NewWriteLatency returns a latency with no write seen yet (0).
func NewWriteLatency() *WriteLatency { return newWriteLatency(clock.RealClock{}) }

func newWriteLatency(clk clock.PassiveClock) *WriteLatency { return &WriteLatency{clock: clk} }

// Wrap is a rest.Config WrapTransport.
func (l *WriteLatency) Wrap(rt http.RoundTripper) http.RoundTripper {
	return &latencyRoundTripper{next: rt, latency: l}
}

// Latency is the moving average of recent writes' answers; nil answers 0.
func (l *WriteLatency) Latency() time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ewma
}

func (l *WriteLatency) observe(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ewma == 0 {
		l.ewma = d
		return
	}
	l.ewma += time.Duration(writeLatencyWeight * float64(d-l.ewma))
}

type latencyRoundTripper struct {
	next    http.RoundTripper
	latency *WriteLatency
}

// RoundTrip times writes only: reads and watches (long-lived GETs) say
// nothing about how soon a write is answered.
func (t *latencyRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return t.next.RoundTrip(req)
	}
	start := t.latency.clock.Now()
	resp, err := t.next.RoundTrip(req)
	t.latency.observe(t.latency.clock.Since(start))
	return resp, err
}
