package workload

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// Admission is in two phases when a workload's ClusterQueue has admission
// checks: the scheduler reserves quota (QuotaReserved) and lists the checks
// that apply to the flavors it reserved, each Pending; every check's
// controller then answers. All Ready: the workload is admitted (Admitted)
// and its job starts with what the checks add to its pods. Retry: it is
// evicted, releases its quota and is queued again after a backoff, its
// checks back to Pending. Rejected: it is deactivated. A workload evicted
// for any reason starts its checks again on its next reservation.

// ReserveForChecks records a reservation that must pass the named checks
// before it is admitted: QuotaReserved, each check Pending, and Admitted
// False saying what it waits for. Without checks it admits at once, as
// Reserve followed by Admit.
func ReserveForChecks(wl *musterv1beta1.Workload, adm *musterv1beta1.Admission, checks []string, now time.Time) bool {
	Reserve(wl, adm, now)
	if len(checks) == 0 {
		wl.Status.AdmissionChecks = nil
		return Admit(wl, now)
	}
	syncChecks(wl, checks, now)
	set(wl, musterv1beta1.WorkloadAdmitted, metav1.ConditionFalse, musterv1beta1.ReasonUnsatisfiedChecks,
		"Waiting for admission checks: "+strings.Join(checks, ", "), now)
	return true
}

// SyncChecks makes the checks of a workload that holds quota those its
// ClusterQueue has now: a check taken off the queue no longer holds it, a
// check added is Pending. It reports whether anything changed.
func SyncChecks(wl *musterv1beta1.Workload, names []string, now time.Time) bool {
	if !HoldsQuota(wl) {
		return false
	}
	have := make([]string, 0, len(wl.Status.AdmissionChecks))
	for _, c := range wl.Status.AdmissionChecks {
		have = append(have, string(c.Name))
	}
	if slices.Equal(have, names) {
		return false
	}
	syncChecks(wl, names, now)
	return true
}

// syncChecks makes the workload's checks exactly names, in that order: new
// ones Pending, others as they are.
func syncChecks(wl *musterv1beta1.Workload, names []string, now time.Time) {
	out := make([]musterv1beta1.AdmissionCheckState, 0, len(names))
	for _, name := range names {
		if st := FindCheck(wl, name); st != nil {
			out = append(out, *st)
			continue
		}
		out = append(out, musterv1beta1.AdmissionCheckState{
			Name: musterv1beta1.AdmissionCheckReference(name), State: musterv1beta1.CheckStatePending,
			LastTransitionTime: metav1.NewTime(now),
		})
	}
	wl.Status.AdmissionChecks = out
}

// FindCheck returns the workload's state for a check, or nil.
func FindCheck(wl *musterv1beta1.Workload, name string) *musterv1beta1.AdmissionCheckState {
	for i := range wl.Status.AdmissionChecks {
		if string(wl.Status.AdmissionChecks[i].Name) == name {
			return &wl.Status.AdmissionChecks[i]
		}
	}
	return nil
}

// SetCheckState is what a check's controller writes: the state of its
// check for the workload, with a message and, for Ready, what it adds to
// the pods. The transition time moves only with the state. A check the
// workload does not have (its queue has no such check, or it holds no
// quota) is not added: nothing changes.
func SetCheckState(wl *musterv1beta1.Workload, st musterv1beta1.AdmissionCheckState, now time.Time) bool {
	old := FindCheck(wl, string(st.Name))
	if old == nil {
		return false
	}
	st.LastTransitionTime = old.LastTransitionTime
	if old.State != st.State {
		st.LastTransitionTime = metav1.NewTime(now)
	}
	// The count is the lifecycle's (EvictForCheck), not the controller's.
	st.RetryCount = old.RetryCount
	if old.State == musterv1beta1.CheckStateReady && st.State != musterv1beta1.CheckStateReady && len(st.PodSetUpdates) == 0 {
		// The job may run with what the check added: kept until the quota
		// is released, so stopping the job takes it out again.
		st.PodSetUpdates = old.PodSetUpdates
	}
	if equality.Semantic.DeepEqual(*old, st) {
		return false
	}
	*old = st
	return true
}

// ChecksReady reports whether every check of the workload is Ready (true
// for a workload without checks).
func ChecksReady(wl *musterv1beta1.Workload) bool {
	for _, c := range wl.Status.AdmissionChecks {
		if c.State != musterv1beta1.CheckStateReady {
			return false
		}
	}
	return true
}

// FailedCheck returns the first check that rejected the workload, else the
// first that asks for a retry, else nil: a rejection wins, since retrying
// cannot help it.
func FailedCheck(wl *musterv1beta1.Workload) *musterv1beta1.AdmissionCheckState {
	var retry *musterv1beta1.AdmissionCheckState
	for i := range wl.Status.AdmissionChecks {
		switch c := &wl.Status.AdmissionChecks[i]; c.State {
		case musterv1beta1.CheckStateRejected:
			return c
		case musterv1beta1.CheckStateRetry:
			if retry == nil {
				retry = c
			}
		}
	}
	return retry
}

// PlacementDelayed reports whether a pod set of the workload waits to be
// placed on nodes a check provisions.
func PlacementDelayed(wl *musterv1beta1.Workload) bool {
	if wl.Status.Admission == nil {
		return false
	}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		if d := psa.DelayedTopologyRequest; d != nil && *d == musterv1beta1.DelayedTopologyRequestPending {
			return true
		}
	}
	return false
}

// AdmitChecked admits a workload that holds quota once every one of its
// checks is Ready and no pod set still waits to be placed: the last phase
// of a two-phase admission. It does nothing to a workload that is already
// admitted, evicted, or still waiting.
func AdmitChecked(wl *musterv1beta1.Workload, now time.Time) bool {
	if !HoldsQuota(wl) || IsEvicted(wl) || !ChecksReady(wl) || PlacementDelayed(wl) ||
		meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadAdmitted) {
		return false
	}
	return Admit(wl, now)
}

// EvictForCheck evicts a workload one of whose checks asked for a retry:
// Evicted with reason AdmissionCheck, not queued again before requeueAt,
// and the check's own retry count up by one. The workload's requeue count
// is left alone: it counts the requeues of waitForPodsReady, whose limit
// a check's retries must not use up. Its quota is released once its job
// is stopped (Requeue).
func EvictForCheck(wl *musterv1beta1.Workload, check string, requeueAt, now time.Time) bool {
	st := FindCheck(wl, check)
	if st == nil {
		return false
	}
	msg := fmt.Sprintf("Admission check %s asked for a retry: %s", st.Name, st.Message)
	if !Evict(wl, musterv1beta1.ReasonAdmissionCheck, msg, now) {
		return false
	}
	retries := CheckRetries(st) + 1
	st.RetryCount = &retries
	rs := musterv1beta1.RequeueState{}
	if wl.Status.RequeueState != nil {
		rs = *wl.Status.RequeueState
	}
	rs.RequeueAt = &metav1.Time{Time: requeueAt}
	wl.Status.RequeueState = &rs
	return true
}

// CheckRetries is how many times a check asked for a retry of the
// workload.
func CheckRetries(st *musterv1beta1.AdmissionCheckState) int32 {
	if st.RetryCount == nil {
		return 0
	}
	return *st.RetryCount
}

// RejectedMessage is the deactivation message of a rejected workload.
func RejectedMessage(check *musterv1beta1.AdmissionCheckState) string {
	return fmt.Sprintf("Admission check %s rejected the workload: %s", check.Name, check.Message)
}

// resetChecks puts every check back to Pending once the workload's quota is
// released: the next reservation asks them again from the start.
func resetChecks(wl *musterv1beta1.Workload, now time.Time) {
	for i := range wl.Status.AdmissionChecks {
		c := &wl.Status.AdmissionChecks[i]
		if c.State != musterv1beta1.CheckStatePending {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		c.Message = fmt.Sprintf("Reset to Pending after the quota was released (was %s)", c.State)
		c.State = musterv1beta1.CheckStatePending
		c.PodSetUpdates, c.RequeueAfterSeconds = nil, nil
	}
}

// PlaceDelayed records the placement of the pod sets that waited for
// provisioned nodes: the new admission (same queue, same flavors), with
// those pod sets' delayed request Ready. A workload that no longer holds
// that reservation is unchanged.
func PlaceDelayed(wl *musterv1beta1.Workload, adm *musterv1beta1.Admission) bool {
	old := wl.Status.Admission
	if !HoldsQuota(wl) || IsEvicted(wl) || !PlacementDelayed(wl) ||
		old.ClusterQueue != adm.ClusterQueue || len(old.PodSetAssignments) != len(adm.PodSetAssignments) {
		return false
	}
	for i := range adm.PodSetAssignments {
		if d := old.PodSetAssignments[i].DelayedTopologyRequest; d != nil {
			ready := musterv1beta1.DelayedTopologyRequestReady
			adm.PodSetAssignments[i].DelayedTopologyRequest = &ready
		}
	}
	wl.Status.Admission = adm
	return true
}
