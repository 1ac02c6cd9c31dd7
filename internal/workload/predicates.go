package workload

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// HasQuotaReservation reports whether the workload's status records an
// admission, finished or not.
func HasQuotaReservation(wl *musterv1beta1.Workload) bool { return wl.Status.Admission != nil }

// HoldsQuota reports whether the workload reserves quota: it has an
// admission and has not finished. A finished workload's admission is kept
// as a record, but its quota is free.
func HoldsQuota(wl *musterv1beta1.Workload) bool {
	return HasQuotaReservation(wl) && !IsFinished(wl)
}

// IsAdmitted reports whether the workload's job may run: it holds an
// admission that was not evicted since.
func IsAdmitted(wl *musterv1beta1.Workload) bool {
	return HasQuotaReservation(wl) &&
		meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadAdmitted) &&
		!IsEvicted(wl)
}

// IsEvicted reports whether the workload was told to stop. The condition
// stays until the workload is admitted again, so a requeued workload is
// still evicted; see IsEvicting.
func IsEvicted(wl *musterv1beta1.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadEvicted)
}

// IsEvicting reports whether the workload was told to stop but still holds
// its admission: its job is winding down and then its quota is released.
func IsEvicting(wl *musterv1beta1.Workload) bool { return HasQuotaReservation(wl) && IsEvicted(wl) }

// IsFinished reports whether the workload's job finished (or could not
// start): its quota is released for good.
func IsFinished(wl *musterv1beta1.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadFinished)
}

// IsActive reports whether the workload may be queued: spec.active is unset
// or true.
func IsActive(wl *musterv1beta1.Workload) bool { return wl.Spec.Active == nil || *wl.Spec.Active }

// IsPodsReady reports whether all the admitted job's pods are ready.
func IsPodsReady(wl *musterv1beta1.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadPodsReady)
}

// RequeueAt is when a workload evicted with a backoff may be queued again;
// zero when it has no backoff.
func RequeueAt(wl *musterv1beta1.Workload) time.Time {
	if rs := wl.Status.RequeueState; rs != nil && rs.RequeueAt != nil {
		return rs.RequeueAt.Time
	}
	return time.Time{}
}

// RequeueCount is how many times the workload was requeued with a backoff.
func RequeueCount(wl *musterv1beta1.Workload) int32 {
	if rs := wl.Status.RequeueState; rs != nil && rs.Count != nil {
		return *rs.Count
	}
	return 0
}

// StillRunningWhileDeleted reports whether a Workload (being deleted)
// still holds quota for a job that has not stopped: the job reconciler
// removes the resource-in-use finalizer once the job is stopped, and until
// then the pods use the quota.
func StillRunningWhileDeleted(wl *musterv1beta1.Workload) bool {
	return HasQuotaReservation(wl) && slices.Contains(wl.Finalizers, musterv1beta1.ResourceInUseFinalizer)
}

// Gone reports whether the scheduler should forget the workload: finished,
// or deleted with no job still running on its quota.
func Gone(wl *musterv1beta1.Workload) bool {
	return IsFinished(wl) || (!wl.DeletionTimestamp.IsZero() && !StillRunningWhileDeleted(wl))
}

// ReservedAt is when the workload's quota was reserved; zero without a
// reservation.
func ReservedAt(wl *musterv1beta1.Workload) time.Time {
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved); c != nil && HasQuotaReservation(wl) {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// ReservationID identifies the workload's current reservation: its
// ClusterQueue and the time QuotaReserved turned True, which every new
// reservation stamps anew. What a check creates for a reservation carries
// it, so that what was made for an earlier one is never taken for the
// current one's, whatever the clocks or the caches say.
func ReservationID(wl *musterv1beta1.Workload) string {
	if wl.Status.Admission == nil {
		return ""
	}
	return string(wl.Status.Admission.ClusterQueue) + "@" + ReservedAt(wl).UTC().Format(time.RFC3339)
}
