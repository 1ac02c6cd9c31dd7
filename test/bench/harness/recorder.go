package harness

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Recorder keeps each workload's timeline: created (by the generator),
// admitted, evicted, released (finished, or its eviction completed).
type Recorder struct {
	mu        sync.Mutex
	workloads map[string]*timeline
	// admissions are all admission times, re-admissions included.
	admissions []time.Time
	evictions  int
	// overdue counts the evictions of workloads that had held quota past
	// their runtime (wlView.heldPastRuntime): the harness's kubelet was late
	// to finish them, and on time there would have been nothing to evict.
	overdue int
	// overdueSeenLate counts the overdue evictions whose admission the
	// kubelet had not seen early enough for its runtime to end before the
	// eviction (kubeletLate): its watch, not its write, was late.
	overdueSeenLate int
	// seenLags are how long after the scheduler's QuotaReserved time the
	// harness saw each admission (ms; that time is whole seconds, so up to
	// 1 s more than the real lag).
	seenLags []float64
	finished int
	// changed is signalled on every finish, for waiters.
	changed chan struct{}
}

type timeline struct {
	class    string
	milliCPU int64
	created  time.Time
	// admitted is the first admission.
	admitted time.Time
	// holding is since when it holds quota; zero when it does not.
	holding time.Time
	// holds are the intervals it held quota.
	holds    []span
	finished time.Time
	// last flags seen, to detect transitions.
	wasAdmitted, wasEvicted, wasFinished bool
}

// span is an interval of time.
type span struct{ from, to time.Time }

// held is the quota a workload held over its holds, in millicore-seconds.
func (t *timeline) held() float64 {
	var sum float64
	for _, h := range t.holds {
		sum += h.to.Sub(h.from).Seconds() * float64(t.milliCPU)
	}
	return sum
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{workloads: map[string]*timeline{}, changed: make(chan struct{}, 1)}
}

// Created records a workload the generator is about to create.
func (r *Recorder) Created(key, class string, milliCPU int64, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timeline(key).class, r.timeline(key).milliCPU, r.timeline(key).created = class, milliCPU, at
}

func (r *Recorder) timeline(key string) *timeline {
	t := r.workloads[key]
	if t == nil {
		t = &timeline{}
		r.workloads[key] = t
	}
	return t
}

// overdueSlack is how much longer than its runtime a workload may have
// held its quota when evicted without the eviction counting as overdue:
// the conditions' times are whole seconds, and the kubelet's own write
// takes a moment on an idle API server.
const overdueSlack = 1500 * time.Millisecond

// heldPastRuntime reports whether an evicted workload had held its quota
// longer than its runtime (and overdueSlack), by the times the scheduler
// wrote on its QuotaReserved and Evicted conditions: had the kubelet seen
// its admission and finished it on time, there would have been nothing to
// evict. The scheduler's times, not when the harness saw them: in a
// creation burst the harness's watch, which the kubelet shares, lags by
// seconds.
func (w *wlView) heldPastRuntime() bool {
	reserved := meta.FindStatusCondition(w.Conditions, "QuotaReserved")
	evicted := meta.FindStatusCondition(w.Conditions, "Evicted")
	if reserved == nil || evicted == nil || reserved.Status != metav1.ConditionTrue {
		return false
	}
	held := evicted.LastTransitionTime.Sub(reserved.LastTransitionTime.Time)
	return held > time.Duration(w.RuntimeMs)*time.Millisecond+overdueSlack
}

// kubeletLate reports whether the kubelet, which finishes a workload its
// runtime after it saw the admission, surely had not seen it early enough
// to finish it before the eviction: its finish was due no earlier than a
// second after the scheduler's Evicted time (whole seconds, so the
// eviction came before that). A finish due inside that second counts as
// in time, so this is a lower bound. seen is zero when the kubelet saw
// the admission only with the eviction.
func (w *wlView) kubeletLate(seen time.Time) bool {
	evicted := meta.FindStatusCondition(w.Conditions, "Evicted")
	if evicted == nil {
		return false
	}
	if seen.IsZero() {
		return true
	}
	due := seen.Add(time.Duration(w.RuntimeMs) * time.Millisecond)
	return !due.Before(evicted.LastTransitionTime.Add(time.Second))
}

// seenLag is how long after the scheduler's QuotaReserved time the
// harness saw the admission, false without that condition.
func (w *wlView) seenLag(at time.Time) (time.Duration, bool) {
	reserved := meta.FindStatusCondition(w.Conditions, "QuotaReserved")
	if reserved == nil || reserved.Status != metav1.ConditionTrue {
		return 0, false
	}
	return at.Sub(reserved.LastTransitionTime.Time), true
}

// Observe records the transitions a new version of a workload shows.
func (r *Recorder) Observe(v *wlView, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.timeline(v.Key)
	admitted, evicted, finished := v.Admitted(), v.Evicted(), v.Finished()
	seen := t.holding
	if admitted && !finished && !t.wasAdmitted {
		r.admissions = append(r.admissions, at)
		if t.admitted.IsZero() {
			t.admitted = at
		}
		t.holding = at
		if lag, ok := v.seenLag(at); ok {
			r.seenLags = append(r.seenLags, float64(lag.Microseconds())/1000)
		}
	}
	if evicted && !t.wasEvicted {
		r.countEviction(v, seen)
	}
	if !t.holding.IsZero() && (finished || !v.HasAdmission) {
		t.holds = append(t.holds, span{from: t.holding, to: at})
		t.holding = time.Time{}
	}
	if finished && !t.wasFinished {
		t.finished = at
		r.finished++
		select {
		case r.changed <- struct{}{}:
		default:
		}
	}
	t.wasAdmitted, t.wasEvicted, t.wasFinished = admitted && !finished, evicted, finished
}

// countEviction counts an eviction, whether its victim had held quota past
// its runtime and, if so, whether the kubelet had seen its admission late;
// seen is when the harness saw the admission, zero if only with this.
func (r *Recorder) countEviction(v *wlView, seen time.Time) {
	r.evictions++
	if !v.heldPastRuntime() {
		return
	}
	r.overdue++
	if v.kubeletLate(seen) {
		r.overdueSeenLate++
	}
}

// Finished is how many workloads finished so far.
func (r *Recorder) Finished() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished
}

// Admitted is how many workloads were admitted at least once.
func (r *Recorder) Admitted(class string) (admitted, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.workloads {
		if class != "" && t.class != class {
			continue
		}
		total++
		if !t.admitted.IsZero() {
			admitted++
		}
	}
	return admitted, total
}

// timesToAdmission are the first-admission waits (ms) of a class.
func (r *Recorder) timesToAdmission(class string) []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []float64
	for _, t := range r.workloads {
		if t.class == class && !t.admitted.IsZero() {
			out = append(out, float64(t.admitted.Sub(t.created).Microseconds())/1000)
		}
	}
	return out
}
