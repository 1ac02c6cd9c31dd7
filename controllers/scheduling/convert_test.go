package scheduling

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core/scheduler"
)

// TestReasonsOfTheCore: every eviction and preemption of the core is
// written with its own reason of the API.
func TestReasonsOfTheCore(t *testing.T) {
	for e, want := range map[scheduler.Eviction]string{
		scheduler.ClusterQueueStopped: musterv1beta1.ReasonClusterQueueStopped,
		scheduler.LocalQueueStopped:   musterv1beta1.ReasonLocalQueueStopped,
	} {
		if got := EvictionReason(e); got != want {
			t.Errorf("eviction %d written as %s, want %s", e, got, want)
		}
	}
	for r, want := range map[scheduler.PreemptionReason]string{
		scheduler.InClusterQueue:                musterv1beta1.ReasonInClusterQueue,
		scheduler.InCohortReclamation:           musterv1beta1.ReasonInCohortReclamation,
		scheduler.InCohortReclaimWhileBorrowing: musterv1beta1.ReasonInCohortReclaimWhileBorrowing,
		scheduler.InCohortFairSharing:           musterv1beta1.ReasonInCohortFairSharing,
	} {
		if got := PreemptionReason(r); got != want {
			t.Errorf("preemption %s written as %s, want %s", r, got, want)
		}
	}
}

// TestStarvationYieldDefaults: unset, the held room yields after ten
// thresholds; 0 never yields; a value is taken as given.
func TestStarvationYieldDefaults(t *testing.T) {
	for _, tc := range []struct {
		yield *int32
		want  time.Duration
	}{{nil, 5 * time.Hour}, {ptr.To[int32](0), 0}, {ptr.To[int32](7200), 2 * time.Hour}} {
		cq := &musterv1beta1.ClusterQueue{Spec: musterv1beta1.ClusterQueueSpec{
			Starvation: &musterv1beta1.StarvationPolicy{AfterSeconds: ptr.To[int32](1800), YieldAfterSeconds: tc.yield}}}
		if got := toClusterQueue(cq).StarvationYieldAfter; got != tc.want {
			t.Errorf("yieldAfterSeconds %v: %s, want %s", tc.yield, got, tc.want)
		}
	}
}
