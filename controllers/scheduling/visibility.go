package scheduling

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// What the visibility API reads of the scheduling state: the queues' order
// and the scheduler's latest pending reasons, in memory, without a request
// to the API server.

// Synced reports whether the core holds everything the API had: only then
// are the queues' positions complete. Every replica rebuilds it at start
// and keeps it from the informers after.
func (s *State) Synced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// PendingReason is the scheduler's latest reason for a pending workload, as
// its QuotaReserved condition will say it; on a follower, or before the
// leader's first cycle decided it, what the condition says; empty when
// neither knows.
func (s *State) PendingReason(key string) string {
	if s.ReasonOf != nil && s.Leading() {
		if why, ok := s.ReasonOf(key); ok {
			return why.Message()
		}
	}
	if s.statusReason != nil {
		return s.statusReason(key)
	}
	return ""
}

// reasonInStatus reads a workload's QuotaReserved message from the
// informers' cache.
func reasonInStatus(reader client.Reader) func(key string) string {
	return func(key string) string {
		ns, name, ok := strings.Cut(key, "/")
		if !ok {
			return ""
		}
		var wl musterv1beta1.Workload
		if err := reader.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &wl); err != nil {
			return ""
		}
		if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved); c != nil && c.Status == metav1.ConditionFalse {
			return c.Message
		}
		return ""
	}
}
