package admission

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/scheduling"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/workload"
)

// reasonGrace is how long a workload waits before its pending reason is
// written: most waits in a busy queue are shorter, and a workload admitted
// within it costs no write at all.
const reasonGrace = time.Second

// Pending reasons yield to admissions. While the scheduler is admitting or
// evicting (it wrote within busyWindow) reasons are written at busyRate;
// otherwise at up to 1/reasonShare of the client's request budget.
// Admissions thus keep the API server (and the client's QPS) to themselves
// under load, and a backlog still gets its reasons quickly once quiet.
// While a backlog drains, nearly every workload waits a while near the
// head of its queues, so the writer is never idle and the busy rate is
// what reasons cost per admission: each reason comes with its event, so
// at r a second against A admissions a second it is 2r/A writes per
// admitted workload beside its admission and event — at one a second,
// under 0.1 while anything near 20 a second is admitted. A reason not
// yet written is not hidden meanwhile: kubectl muster why and the
// visibility API read the latest from memory.
//
// A draining backlog is admitted in bursts — a cycle's admissions, then a
// pause until its jobs free quota — so busyWindow spans such pauses: a
// shorter one would take every pause of a backlog admitted a few a second
// for quiet and let its reasons out at the idle rate. For the same reason
// the idle rate saves no burst: a pause that is not over yet would spend
// it at once.
const (
	reasonShare = 5
	busyRate    = 1
	busyWindow  = time.Second
)

// Under the client's rate limit, reasons also take only what the
// scheduler's own Workload writes leave of it (budget, which the
// scheduler's writes drain first), and at least floorRate a second: on
// Kueue's baseline mix at QPS 50 the reasons took 0.3 writes per admitted
// workload from the same 50 a second, capping admissions at ~39/s.
const floorRate = 1

// reasonWriter tells pending workloads why they wait, off the scheduling
// path: the cycle only records the latest reason; workers write it after
// reasonGrace, at a bounded rate, unless the workload was admitted since.
// An admission therefore never waits behind reason writes, and a reason
// that changes several times while queued is written once.
type reasonWriter struct {
	client client.Client
	// recorder emits the Warning event Pending when the reason changes.
	recorder events.EventRecorder
	clock    clock.PassiveClock
	ticker   clock.WithTicker
	// idle and busy limit the writes when the scheduler is quiet or busy.
	idle, busy flowcontrol.RateLimiter
	// budget mirrors the client's Workload write limit; the scheduler's
	// writes take from it first. floor keeps reasons going when it is
	// always empty; poll is how often a reason looks for a leftover.
	budget *rate.Limiter
	floor  flowcontrol.RateLimiter
	poll   time.Duration
	// lastWrite is when the scheduler last wrote (unix nanoseconds).
	lastWrite atomic.Int64
	queue     workqueue.TypedDelayingInterface[string]

	mu sync.Mutex
	// latest is the reason to write per workload key; admitted workloads
	// are dropped from it.
	latest map[string]core.Pending
	// written is each workload's reason last written, and when; queued
	// holds the workloads waiting in queue.
	written map[string]writtenReason
	queued  map[string]bool
}

func newReasonWriter(c client.Client, recorder events.EventRecorder, clk clock.WithTicker, clientQPS float32) *reasonWriter {
	qps := max(clientQPS/reasonShare, busyRate)
	clientQPS = max(clientQPS, floorRate)
	return &reasonWriter{
		client: c, recorder: recorder, clock: clk, ticker: clk,
		idle:   flowcontrol.NewTokenBucketRateLimiter(qps, 1),
		busy:   flowcontrol.NewTokenBucketRateLimiter(busyRate, 1),
		budget: rate.NewLimiter(rate.Limit(clientQPS), int(min(clientQPS, 1000))),
		floor:  flowcontrol.NewTokenBucketRateLimiter(floorRate, 1),
		poll:   time.Duration(float64(time.Second) / float64(min(clientQPS, 1000))),
		// The grace period runs on the writer's clock, so tests step it.
		queue:  workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Clock: clk}),
		latest: map[string]core.Pending{}, written: map[string]writtenReason{}, queued: map[string]bool{},
	}
}

// writtenReason is the reason last written for a workload, and when.
type writtenReason struct {
	reason core.Pending
	at     time.Time
}

// schedulerWrote tells the writer the scheduler is busy writing, and takes
// the write from the budget.
func (r *reasonWriter) schedulerWrote() {
	r.lastWrite.Store(r.clock.Now().UnixNano())
	r.budget.Allow()
}

// wait takes a turn from the limiter that fits the scheduler's activity,
// then a write the scheduler left over (or the floor's).
func (r *reasonWriter) wait(ctx context.Context) error {
	l := r.idle
	if r.clock.Since(time.Unix(0, r.lastWrite.Load())) < busyWindow {
		l = r.busy
	}
	if err := l.Wait(ctx); err != nil {
		return err
	}
	for !r.budget.Allow() && !r.floor.TryAccept() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.poll):
		}
	}
	return nil
}

// set records why a workload waits; it is written after the grace period.
// A reason already queued, or written and unchanged, costs a map lookup and
// a comparison: the cycle calls this for every workload it leaves pending,
// and nothing is formatted until it is written.
func (r *reasonWriter) set(key string, why core.Pending) {
	r.mu.Lock()
	r.latest[key] = why
	// Against what was written, not the latest: a reason only remembered
	// (the workload was deep in its queues) was never written.
	w, wrote := r.written[key]
	due := !r.queued[key] && (!wrote || !w.reason.Equal(&why) || r.clock.Since(w.at) >= pendingRefresh)
	if due {
		r.queued[key] = true
	}
	r.mu.Unlock()
	if due {
		r.queue.AddAfter(key, reasonGrace)
	}
}

// remember records why a workload waits without writing it: the
// visibility API and kubectl muster why read it from here.
func (r *reasonWriter) remember(key string, why core.Pending) {
	r.mu.Lock()
	r.latest[key] = why
	r.mu.Unlock()
}

// wasWritten reports whether why is what was last written for key. The
// caller holds r.mu.
func (r *reasonWriter) wasWritten(key string, why *core.Pending) bool {
	w, ok := r.written[key]
	return ok && w.reason.Equal(why)
}

// promoteEvery is how often reasons only remembered are looked at again:
// a workload moves up its queues without a cycle deciding it when those
// ahead of it leave unadmitted (deleted, deactivated), and it would
// otherwise show no reason until something frees quota.
const promoteEvery = 5 * time.Second

// promote queues the writes of remembered reasons whose workloads are now
// near the head of their queues (near), and lets go of the reasons of
// workloads no longer queued.
func (r *reasonWriter) promote(near func(key string) (near, queued bool)) {
	// Which workloads wait unwritten is read under the writer's lock, and
	// their places in the queues outside it: the cycle and the visibility
	// API do not wait for a look over a backlog of 100,000.
	r.mu.Lock()
	var unwritten []string
	for key, why := range r.latest {
		if !r.queued[key] && !r.wasWritten(key, &why) {
			unwritten = append(unwritten, key)
		}
	}
	r.mu.Unlock()
	var due, gone []string
	for _, key := range unwritten {
		switch isNear, queued := near(key); {
		case !queued:
			gone = append(gone, key)
		case isNear:
			due = append(due, key)
		}
	}
	r.mu.Lock()
	for _, key := range gone {
		delete(r.latest, key)
		delete(r.written, key)
	}
	due = slices.DeleteFunc(due, func(key string) bool {
		_, wanted := r.latest[key]
		if !wanted || r.queued[key] {
			return true
		}
		r.queued[key] = true
		return false
	})
	r.mu.Unlock()
	for _, key := range due {
		r.queue.AddAfter(key, reasonGrace)
	}
}

// retry writes a workload's latest reason again after the grace period.
func (r *reasonWriter) retry(key string) {
	r.mu.Lock()
	_, wanted := r.latest[key]
	due := wanted && !r.queued[key]
	if due {
		r.queued[key] = true
	}
	r.mu.Unlock()
	if due {
		r.queue.AddAfter(key, reasonGrace)
	}
}

// forget drops a workload that was admitted or is gone.
func (r *reasonWriter) forget(key string) {
	r.mu.Lock()
	delete(r.latest, key)
	delete(r.written, key)
	delete(r.queued, key)
	r.mu.Unlock()
}

// wanted reports whether the workload still waits for a reason: it may
// have been admitted while the writer waited for its turn.
func (r *reasonWriter) wanted(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.latest[key]
	return ok
}

// run writes reasons until ctx ends.
func (r *reasonWriter) run(ctx context.Context, workers int, near func(key string) (near, queued bool)) {
	go func() { <-ctx.Done(); r.queue.ShutDown() }()
	go func() {
		tick := r.ticker.NewTicker(promoteEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C():
				r.promote(near)
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				key, shutdown := r.queue.Get()
				if shutdown {
					return
				}
				r.write(ctx, key)
				r.queue.Done(key)
			}
		})
	}
	wg.Wait()
}

func (r *reasonWriter) write(ctx context.Context, key string) {
	r.mu.Lock()
	delete(r.queued, key)
	why, ok := r.latest[key]
	written := r.written[key]
	r.mu.Unlock()
	if !ok {
		return
	}
	var wl musterv1beta1.Workload
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &wl); err != nil || workload.HasQuotaReservation(&wl) {
		if apierrors.IsNotFound(err) {
			r.forget(key)
		}
		return
	}
	// The same reason with other amounts (available quota moves with every
	// admission) is rewritten at most every pendingRefresh, as long as the
	// workload still shows the reason last written.
	msg := why.Message()
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved); c != nil &&
		c.Reason == musterv1beta1.ReasonPending && c.Message != msg && r.clock.Since(written.at) < pendingRefresh &&
		written.reason.SameButAmounts(&why) && c.Message == written.reason.Message() {
		return
	}
	if err := r.wait(ctx); err != nil || !r.wanted(key) {
		return
	}
	news := r.isNews(&wl, written, &why, msg)
	done, err := scheduling.WritePending(ctx, r.client, &wl, musterv1beta1.ReasonPending, msg, r.clock.Now())
	if err != nil {
		if ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "Failed to update the pending reason", "workload", klog.KObj(&wl))
		}
		return
	}
	if !done {
		// The workload changed under the write: try again on its new
		// version, or the reason would wait for a different one.
		r.retry(key)
		return
	}
	r.mu.Lock()
	if _, still := r.latest[key]; still {
		r.written[key] = writtenReason{reason: why, at: r.clock.Now()}
	}
	r.mu.Unlock()
	if news && r.recorder != nil {
		r.recorder.Eventf(&wl, nil, corev1.EventTypeWarning, musterv1beta1.ReasonPending, "Wait", "%s", msg)
	}
}

// isNews is whether writing msg gives the workload a new reason, worth the
// Warning event Pending: not the same text, not the same reason with other
// amounts (rewritten every pendingRefresh), and not a reason it already
// showed before this manager started (a restart emits no events).
func (r *reasonWriter) isNews(wl *musterv1beta1.Workload, written writtenReason, why *core.Pending, msg string) bool {
	c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)
	if c == nil || c.Reason != musterv1beta1.ReasonPending {
		return true
	}
	if c.Message == msg || written.at.IsZero() {
		return false
	}
	return !written.reason.SameButAmounts(why)
}

// reason returns the latest reason recorded for a workload.
func (r *reasonWriter) reason(key string) (core.Pending, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	why, ok := r.latest[key]
	return why, ok
}
