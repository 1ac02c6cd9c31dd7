package scheduling

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core/scheduler"
	"github.com/musterhq/muster/internal/workload"
	"github.com/musterhq/muster/test/builder"
)

// TestPhaseOf: a Workload's status says where the core keeps it.
func TestPhaseOf(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	adm := &musterv1beta1.Admission{ClusterQueue: "cq"}
	mk := func(f func(wl *musterv1beta1.Workload)) *musterv1beta1.Workload {
		wl := builder.MakeWorkload("w", "ns").Queue("lq").Priority(0).Request("nvidia.com/gpu", "1").Created(time.Now()).Obj()
		f(wl)
		return wl
	}
	for name, tc := range map[string]struct {
		wl   *musterv1beta1.Workload
		want scheduler.Phase
	}{
		"new":      {mk(func(*musterv1beta1.Workload) {}), scheduler.PhasePending},
		"admitted": {mk(func(wl *musterv1beta1.Workload) { workload.Reserve(wl, adm, now) }), scheduler.PhaseHolding},
		"finished": {mk(func(wl *musterv1beta1.Workload) {
			workload.Reserve(wl, adm, now)
			workload.Finish(wl, musterv1beta1.ReasonSucceeded, "", now)
		}), scheduler.PhaseGone},
		"deleted while its job runs": {mk(func(wl *musterv1beta1.Workload) {
			workload.Reserve(wl, adm, now)
			wl.DeletionTimestamp = &metav1.Time{Time: now}
			wl.Finalizers = []string{musterv1beta1.ResourceInUseFinalizer}
		}), scheduler.PhaseHolding},
		"deleted, pending": {mk(func(wl *musterv1beta1.Workload) { wl.DeletionTimestamp = &metav1.Time{Time: now} }), scheduler.PhaseGone},
		"deactivated":      {mk(func(wl *musterv1beta1.Workload) { wl.Spec.Active = new(bool) }), scheduler.PhaseInactive},
		"in backoff": {mk(func(wl *musterv1beta1.Workload) {
			wl.Status.RequeueState = &musterv1beta1.RequeueState{RequeueAt: &metav1.Time{Time: now.Add(time.Minute)}}
		}), scheduler.PhaseBackoff},
		"backoff over": {mk(func(wl *musterv1beta1.Workload) {
			wl.Status.RequeueState = &musterv1beta1.RequeueState{RequeueAt: &metav1.Time{Time: now.Add(-time.Minute)}}
		}), scheduler.PhasePending},
	} {
		if got := phaseOf(tc.wl, now); got != tc.want {
			t.Errorf("%s: phase %d, want %d", name, got, tc.want)
		}
	}
}
