package workload

import (
	"testing"
	"time"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// TestExecutionTimeCountsEveryAdmission: an admission's time is added to
// the past execution time when its quota is released, and the current
// admission counts on top; a pending workload counts only the past.
func TestExecutionTimeCountsEveryAdmission(t *testing.T) {
	wl := admitted() // reserved at t0
	if got := ExecutionTime(wl, t0.Add(10*time.Minute)); got != 10*time.Minute {
		t.Fatalf("first admission: %s, want 10m", got)
	}
	Evict(wl, musterv1beta1.ReasonPreempted, "preempted", t0.Add(10*time.Minute))
	Requeue(wl, t0.Add(12*time.Minute)) // quota held until the job stopped
	if got := pastSeconds(wl); got != 12*60 {
		t.Fatalf("accumulated %ds, want 720", got)
	}
	if got := ExecutionTime(wl, t0.Add(time.Hour)); got != 12*time.Minute {
		t.Fatalf("pending: %s, want the past 12m", got)
	}
	ReserveForChecks(wl, admission(), []string{"prov"}, t0.Add(time.Hour))
	if got := ExecutionTime(wl, t0.Add(time.Hour+3*time.Minute)); got != 12*time.Minute {
		t.Fatalf("waiting for its admission checks: %s, want the past 12m (Kueue counts from the admission)", got)
	}
	SetCheckState(wl, musterv1beta1.AdmissionCheckState{Name: "prov", State: musterv1beta1.CheckStateReady}, t0.Add(time.Hour+3*time.Minute))
	AdmitChecked(wl, t0.Add(time.Hour+3*time.Minute))
	if got := ExecutionTime(wl, t0.Add(time.Hour+8*time.Minute)); got != 17*time.Minute {
		t.Fatalf("second admission: %s, want 17m", got)
	}
	if Requeue(pending(), now) {
		t.Errorf("a pending workload has nothing to release")
	}
}

// TestDeactivationForTimeResetsTheAllowance: a workload deactivated past
// its maximum execution time starts from nothing if reactivated (Kueue).
func TestDeactivationForTimeResetsTheAllowance(t *testing.T) {
	wl := admitted()
	past := int32(300)
	wl.Status.AccumulatedPastExecutionTimeSeconds = &past
	Deactivate(wl, musterv1beta1.ReasonMaximumExecutionTimeExceeded, "too long", t0.Add(time.Minute))
	inactive := false
	wl.Spec.Active = &inactive
	Requeue(wl, t0.Add(2*time.Minute))
	if wl.Status.AccumulatedPastExecutionTimeSeconds != nil {
		t.Fatalf("accumulated %d after deactivation for time, want none", *wl.Status.AccumulatedPastExecutionTimeSeconds)
	}
}

// TestEvictionForTimeStillActiveKeepsTheAllowanceUsed: when the second
// write of a deactivation (spec.active=false) failed and the quota is
// released anyway, the workload keeps the time it used: requeued, it is
// past its bound at once instead of running a whole new allowance.
func TestEvictionForTimeStillActiveKeepsTheAllowanceUsed(t *testing.T) {
	wl := admitted() // reserved at t0
	Deactivate(wl, musterv1beta1.ReasonMaximumExecutionTimeExceeded, "too long", t0.Add(time.Minute))
	Requeue(wl, t0.Add(2*time.Minute))
	if got := pastSeconds(wl); got != 120 {
		t.Fatalf("accumulated %ds, want 120", got)
	}
}
