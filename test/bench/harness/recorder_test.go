package harness

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEvictionsOverdue: an eviction counts as overdue when its victim had
// held quota past its runtime (and the slack) by the times the scheduler
// wrote on its conditions, that is when the kubelet, not the scheduler,
// kept it running — however late the harness saw either.
func TestEvictionsOverdue(t *testing.T) {
	r := NewRecorder()
	t0 := time.Date(2026, 12, 6, 16, 1, 43, 0, time.UTC)
	view := func(key string, evictedAfter time.Duration) *wlView {
		v := &wlView{Key: key, RuntimeMs: 200, HasAdmission: true, Conditions: []metav1.Condition{
			{Type: "QuotaReserved", Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)},
			{Type: "Admitted", Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)},
		}}
		if evictedAfter > 0 {
			v.Conditions = append(v.Conditions, metav1.Condition{Type: "Evicted", Status: metav1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(t0.Add(evictedAfter))})
		}
		return v
	}
	for _, key := range []string{"early", "late"} {
		r.Created(key, "small", 1000, t0)
		r.Observe(view(key, 0), t0.Add(5*time.Second)) // the harness sees the admission late
	}
	r.Observe(view("early", time.Second), t0.Add(5*time.Second))
	r.Observe(view("late", 2*time.Second), t0.Add(5*time.Second))
	res := r.result(Plan{}, t0)
	if res.Evictions != 2 || res.EvictionsOverdue != 1 {
		t.Errorf("evictions %d, overdue %d; want 2, 1", res.Evictions, res.EvictionsOverdue)
	}
}

// TestOverdueEvictionsSeenLate splits the overdue evictions by whether the
// harness's watch delivered the admission too late for the kubelet's
// runtime to end before the eviction (seen late, or first seen together
// with the eviction) or delivered it in time and the finish write lagged;
// and measures each admission's lag behind the scheduler's time.
func TestOverdueEvictionsSeenLate(t *testing.T) {
	r := NewRecorder()
	t0 := time.Date(2026, 12, 6, 16, 1, 43, 0, time.UTC)
	conds := func(evictedAfter time.Duration) []metav1.Condition {
		c := []metav1.Condition{
			{Type: "QuotaReserved", Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)},
			{Type: "Admitted", Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)},
		}
		if evictedAfter > 0 {
			c = append(c, metav1.Condition{Type: "Evicted", Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(evictedAfter))})
		}
		return c
	}
	view := func(key string, evictedAfter time.Duration) *wlView {
		return &wlView{Key: key, RuntimeMs: 200, HasAdmission: true, Conditions: conds(evictedAfter)}
	}
	for _, key := range []string{"seen-late", "seen-in-time", "seen-with-eviction", "due-at-the-bound", "due-inside-the-second"} {
		r.Created(key, "small", 1000, t0)
	}
	r.Observe(view("seen-late", 0), t0.Add(4*time.Second))
	r.Observe(view("seen-in-time", 0), t0.Add(100*time.Millisecond))
	// Evicted at t0+3 s (whole seconds: between 3 and 4 s): a finish due
	// at 4 s surely came too late, one due at 3.5 s may not have.
	r.Observe(view("due-at-the-bound", 0), t0.Add(3800*time.Millisecond))
	r.Observe(view("due-inside-the-second", 0), t0.Add(3300*time.Millisecond))
	for _, key := range []string{"seen-late", "seen-in-time", "seen-with-eviction", "due-at-the-bound", "due-inside-the-second"} {
		r.Observe(view(key, 3*time.Second), t0.Add(5*time.Second))
	}

	res := r.result(Plan{}, t0)
	if res.EvictionsOverdue != 5 || res.EvictionsOverdueSeenLate != 3 {
		t.Errorf("overdue %d, surely seen late %d; want 5, 3", res.EvictionsOverdue, res.EvictionsOverdueSeenLate)
	}
	if lag := res.AdmissionSeenLag; lag.Count != 5 || lag.P50 != 3800 || lag.Max != 5000 {
		t.Errorf("admission lag %+v; want 5 samples, p50 3800 ms, max 5000 ms", lag)
	}
}
