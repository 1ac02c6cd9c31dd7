package harness

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEvictionsOverdue: an eviction counts as overdue when its victim had
// held quota past its runtime (and the slack), that is when the harness's
// kubelet, not the scheduler, kept it running.
func TestEvictionsOverdue(t *testing.T) {
	r := NewRecorder()
	t0 := time.Now()
	view := func(key string, conds ...string) *wlView {
		v := &wlView{Key: key, RuntimeMs: 200, HasAdmission: true}
		for _, c := range conds {
			v.Conditions = append(v.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue})
		}
		return v
	}
	for _, key := range []string{"early", "late"} {
		r.Created(key, "small", 1000, t0)
		r.Observe(view(key, "Admitted"), t0)
	}
	r.Observe(view("early", "Admitted", "Evicted"), t0.Add(300*time.Millisecond))
	r.Observe(view("late", "Admitted", "Evicted"), t0.Add(2*time.Second))
	res := r.result(Plan{}, t0)
	if res.Evictions != 2 || res.EvictionsOverdue != 1 {
		t.Errorf("evictions %d, overdue %d; want 2, 1", res.Evictions, res.EvictionsOverdue)
	}
}
