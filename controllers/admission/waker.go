package admission

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// waker runs one cycle at the earliest time asked for: however many
// workloads ask to be retried, one timer is pending.
type waker struct {
	clock  clock.Clock
	notify func()

	mu sync.Mutex
	// at is when the pending timer fires; stop cancels it.
	at   time.Time
	stop chan struct{}
}

// after asks for a cycle in d.
func (w *waker) after(ctx context.Context, d time.Duration) {
	at := w.clock.Now().Add(d)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil && !w.at.After(at) {
		return // an earlier cycle is coming; it will ask again if needed
	}
	if w.stop != nil {
		close(w.stop)
	}
	stop := make(chan struct{})
	w.at, w.stop = at, stop
	t := w.clock.NewTimer(d)
	go func() {
		defer t.Stop()
		select {
		case <-t.C():
			w.mu.Lock()
			if w.stop == stop {
				w.stop = nil
			}
			w.mu.Unlock()
			w.notify()
		case <-stop:
		case <-ctx.Done():
		}
	}()
}
