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
