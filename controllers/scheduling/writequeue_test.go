package scheduling

import (
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
	q := newWriteQueue(clk, func() { wakes++ })
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
