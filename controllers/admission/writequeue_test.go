package admission

import (
	"net/http"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// The queue's depth follows the writes of the last second: fast writers
// let a cycle decide about a second's worth, slow ones 2 x admissionWriters;
// a stopped cycle is woken once half the queue is written.
func TestWriteQueueFollowsTheWriteRate(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	wakes := 0
	q := newWriteQueue(clk, func() { wakes++ }, 50, nil)
	if got := q.budget(); got != 2*admissionWriters {
		t.Fatalf("budget %d with nothing written yet, want %d", got, 2*admissionWriters)
	}
	for range 100 {
		q.submit(func() {})
	}
	q.drain()
	if got := q.budget(); got != 100 {
		t.Fatalf("budget %d after 100 writes within a second, want 100", got)
	}
	clk.Step(2 * writeHorizon)
	if got := q.budget(); got != 2*admissionWriters {
		t.Fatalf("budget %d once those writes are old, want %d", got, 2*admissionWriters)
	}
	block := make(chan struct{})
	for range 2 * admissionWriters {
		q.submit(func() { <-block })
	}
	if got := q.budget(); got != 0 {
		t.Fatalf("budget %d with the queue full, want 0 until half of it is written", got)
	}
	q.stoppedAtBudget()
	if wakes != 0 {
		t.Fatal("woken with the queue full")
	}
	close(block)
	q.drain()
	if wakes != 1 {
		t.Fatalf("%d wake-ups once the queue drained, want 1", wakes)
	}
}

// While the API server answers slowly, the writers grow to what keeps the
// client's rate busy (rate × latency), never beyond maxAdmissionWriters,
// and the writes still start in the order submitted.
func TestWritersFollowTheAPIServersLatency(t *testing.T) {
	lat := NewWriteLatency()
	q := newWriteQueue(clocktesting.NewFakeClock(time.Now()), func() {}, 50, lat)
	if got := q.writers(); got != admissionWriters {
		t.Fatalf("%d writers before any write, want %d", got, admissionWriters)
	}
	lat.observe(20 * time.Millisecond)
	if got := q.writers(); got != admissionWriters {
		t.Fatalf("%d writers at 20 ms, want %d", got, admissionWriters)
	}
	lat.ewma = 2 * time.Second
	if got := q.writers(); got != 100 {
		t.Fatalf("%d writers at 2 s and 50 writes/s, want 100", got)
	}
	if got := q.budget(); got != 200 {
		t.Fatalf("budget %d at 2 s, want twice the writers", got)
	}
	lat.ewma = time.Minute
	if got := q.writers(); got != maxAdmissionWriters {
		t.Fatalf("%d writers at a minute, want the cap %d", got, maxAdmissionWriters)
	}
	unlimited := newWriteQueue(clocktesting.NewFakeClock(time.Now()), func() {}, 1e6, lat)
	lat.ewma = 10 * time.Millisecond
	if got := unlimited.writers(); got != admissionWriters {
		t.Fatalf("%d writers unthrottled at 10 ms, want %d", got, admissionWriters)
	}

	lat.ewma = 2 * time.Second
	const n = 110
	release := make([]chan struct{}, n)
	started := make(chan int, n)
	for i := range n {
		release[i] = make(chan struct{})
		q.submit(func() {
			started <- i
			<-release[i]
		})
	}
	q.mu.Lock()
	running := q.running
	q.mu.Unlock()
	if running != 100 {
		t.Fatalf("%d writes running, want 100", running)
	}
	for range 100 {
		<-started
	}
	// Each write that finishes starts the next one waiting, in order.
	for i := range n - 100 {
		close(release[i])
		select {
		case got := <-started:
			if got != 100+i {
				t.Fatalf("write %d started after write %d finished, want %d", got, i, 100+i)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no write started after write %d finished", i)
		}
	}
	for i := n - 100; i < n; i++ {
		close(release[i])
	}
	q.drain()
}

// The latency follows writes only, answered by the server after client-go's
// rate limiter: reads and watches do not count.
func TestWriteLatencyTimesWritesOnly(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	slow := roundTripFunc(func(*http.Request) (*http.Response, error) {
		clk.Step(30 * time.Millisecond) // the server's answer
		return &http.Response{StatusCode: http.StatusOK}, nil
	})
	lat := newWriteLatency(clk)
	rt := lat.Wrap(slow)
	get, _ := http.NewRequest(http.MethodGet, "https://api/apis/muster.dev/v1beta1/workloads?watch=true", nil)
	if _, err := rt.RoundTrip(get); err != nil {
		t.Fatal(err)
	}
	if got := lat.Latency(); got != 0 {
		t.Fatalf("latency %v after a watch, want 0", got)
	}
	patch, _ := http.NewRequest(http.MethodPatch, "https://api/apis/muster.dev/v1beta1/namespaces/ns/workloads/w/status", nil)
	if _, err := rt.RoundTrip(patch); err != nil {
		t.Fatal(err)
	}
	if got := lat.Latency(); got != 30*time.Millisecond {
		t.Fatalf("latency %v after a 30 ms patch", got)
	}
	var none *WriteLatency
	if none.Latency() != 0 {
		t.Fatal("a nil latency is not 0")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
