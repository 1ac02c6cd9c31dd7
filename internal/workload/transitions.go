package workload

import (
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// Every transition changes the status of the workload it is given, in
// memory, and reports whether anything changed: a caller writes the status
// only then. Conditions are stamped with now and the workload's generation;
// a condition whose status does not change keeps its transition time.

// Reserve records the quota reserved for a pending workload in a
// ClusterQueue and clears what its previous admission left: the eviction,
// the preemption, and a readiness that these pods have yet to earn. A
// Requeued condition stays as it is, as in Kueue: its time is when the
// workload was last queued, the start of the wait-time metrics.
func Reserve(wl *musterv1beta1.Workload, adm *musterv1beta1.Admission, now time.Time) bool {
	msg := fmt.Sprintf("Quota reserved in ClusterQueue %s", adm.ClusterQueue)
	wl.Status.Admission = adm
	set(wl, musterv1beta1.WorkloadQuotaReserved, metav1.ConditionTrue, musterv1beta1.ReasonQuotaReserved, msg, now)
	if IsPodsReady(wl) {
		set(wl, musterv1beta1.WorkloadPodsReady, metav1.ConditionFalse, musterv1beta1.ReasonWaitForStart, "Not all pods are ready yet", now)
	}
	meta.RemoveStatusCondition(&wl.Status.Conditions, musterv1beta1.WorkloadEvicted)
	meta.RemoveStatusCondition(&wl.Status.Conditions, musterv1beta1.WorkloadPreempted)
	return true
}

// ReplacePlacement records a repaired admission (the pods of failed nodes
// placed on others) on a workload that still holds its quota; conditions
// are kept. It changes nothing for a workload that no longer holds quota.
func ReplacePlacement(wl *musterv1beta1.Workload, adm *musterv1beta1.Admission) bool {
	if !HasQuotaReservation(wl) || IsEvicted(wl) || wl.Status.Admission.ClusterQueue != adm.ClusterQueue {
		return false
	}
	wl.Status.Admission = adm
	return true
}

// Admit lets a workload that holds quota run. Without admission checks the
// scheduler admits in the same write as it reserves (ReserveForChecks).
func Admit(wl *musterv1beta1.Workload, now time.Time) bool {
	if !HasQuotaReservation(wl) {
		return false
	}
	return set(wl, musterv1beta1.WorkloadAdmitted, metav1.ConditionTrue, musterv1beta1.ReasonAdmitted, "The workload is admitted", now)
}

// SetPending says why a workload waits: QuotaReserved=False with a reason
// and message. A workload that already says exactly that is unchanged, so
// repeated reasons cost no write.
func SetPending(wl *musterv1beta1.Workload, reason, msg string, now time.Time) bool {
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved); c != nil &&
		c.Status == metav1.ConditionFalse && c.Reason == reason && c.Message == msg {
		return false
	}
	return set(wl, musterv1beta1.WorkloadQuotaReserved, metav1.ConditionFalse, reason, msg, now)
}

// Evict tells a workload that holds quota to stop, for reason (one of the
// Evicted reasons of the API). Its job reconciler then stops the job and
// requeues the workload. A workload without an admission has nothing to
// evict.
func Evict(wl *musterv1beta1.Workload, reason, msg string, now time.Time) bool {
	if !HasQuotaReservation(wl) {
		return false
	}
	return set(wl, musterv1beta1.WorkloadEvicted, metav1.ConditionTrue, reason, msg, now)
}

// Preempt evicts a workload to make room for another: Evicted and
// Preempted, the latter with the preemption's reason (InClusterQueue,
// InCohortReclamation, ...).
func Preempt(wl *musterv1beta1.Workload, preemptionReason, msg string, now time.Time) bool {
	if !Evict(wl, musterv1beta1.ReasonPreempted, msg, now) {
		return false
	}
	set(wl, musterv1beta1.WorkloadPreempted, metav1.ConditionTrue, preemptionReason, msg, now)
	return true
}

// EvictWithBackoff evicts a workload whose pods were not ready in time and
// records its requeue backoff: the count-th requeue, not before requeueAt.
func EvictWithBackoff(wl *musterv1beta1.Workload, msg string, count int32, requeueAt, now time.Time) bool {
	if !Evict(wl, musterv1beta1.ReasonPodsReadyTimeout, msg, now) {
		return false
	}
	wl.Status.RequeueState = &musterv1beta1.RequeueState{Count: &count, RequeueAt: &metav1.Time{Time: requeueAt}}
	return true
}

// Deactivate evicts a workload for good, for the reason given (past its
// requeuing limit, past its maximum execution time). The caller also sets
// spec.active=false, in a separate (spec) write, which keeps it out of its
// queue until a user reactivates it.
func Deactivate(wl *musterv1beta1.Workload, reason, msg string, now time.Time) bool {
	return Evict(wl, reason, msg, now)
}

// Requeue releases the quota of an evicted workload whose job has stopped:
// the admission goes, QuotaReserved and Admitted turn False, and Requeued
// says why it is back in its queue (False for a deactivated workload, which
// is not). The next admission's pods start from nothing, so a PodsReady
// condition turns False.
func Requeue(wl *musterv1beta1.Workload, now time.Time) bool {
	if !HasQuotaReservation(wl) {
		return false
	}
	msg, reason := "Quota released after eviction", musterv1beta1.ReasonEvicted
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted); c != nil {
		msg, reason = "Requeued after eviction: "+c.Message, c.Reason
		if !IsActive(wl) {
			msg = "Inactive after eviction (set spec.active to true to queue it again): " + c.Message
		}
	}
	if reason == musterv1beta1.ReasonMaximumExecutionTimeExceeded && !IsActive(wl) {
		// As in Kueue: a user who reactivates it gives it a new allowance.
		// (Still active, the deactivation's spec write did not land: it
		// keeps the time used, so it is past its bound again at once.)
		wl.Status.AccumulatedPastExecutionTimeSeconds = nil
	} else {
		accumulateExecutionTime(wl, now)
	}
	wl.Status.Admission = nil
	resetChecks(wl, now)
	// A multi-cluster check dispatches the next reservation anew.
	wl.Status.ClusterName, wl.Status.NominatedClusterNames = "", nil
	if meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadPodsReady) != nil {
		set(wl, musterv1beta1.WorkloadPodsReady, metav1.ConditionFalse, musterv1beta1.ReasonWaitForStart, "Not admitted", now)
	}
	set(wl, musterv1beta1.WorkloadQuotaReserved, metav1.ConditionFalse, musterv1beta1.ReasonPending, msg, now)
	set(wl, musterv1beta1.WorkloadAdmitted, metav1.ConditionFalse, musterv1beta1.ReasonEvicted, msg, now)
	// Each requeue is stamped with its own time, even when the condition
	// was already True: the queue orders requeued workloads by it.
	meta.RemoveStatusCondition(&wl.Status.Conditions, musterv1beta1.WorkloadRequeued)
	if IsActive(wl) {
		set(wl, musterv1beta1.WorkloadRequeued, metav1.ConditionTrue, reason, msg, now)
	} else {
		set(wl, musterv1beta1.WorkloadRequeued, metav1.ConditionFalse, reason, msg, now)
	}
	return true
}

// Finish marks the workload's job finished (Succeeded, Failed, or
// FailedToStart), which releases its quota for good. Finishing is final: a
// finished workload is unchanged.
func Finish(wl *musterv1beta1.Workload, reason, msg string, now time.Time) bool {
	if IsFinished(wl) {
		return false
	}
	return set(wl, musterv1beta1.WorkloadFinished, metav1.ConditionTrue, reason, msg, now)
}

// SetPodsReady records whether all the admitted job's pods are ready. Pods
// that were all ready and no longer are wait for recovery (its own
// timeout); otherwise for start. Only a change of status is a change: the
// transition time is when readiness was gained or lost.
func SetPodsReady(wl *musterv1beta1.Workload, ready bool, now time.Time) bool {
	old := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadPodsReady)
	status, reason, msg := metav1.ConditionFalse, musterv1beta1.ReasonWaitForStart, "Not all pods are ready yet"
	switch {
	case ready:
		status, reason, msg = metav1.ConditionTrue, musterv1beta1.ReasonReady, "All pods are ready"
	case old != nil && old.Status == metav1.ConditionTrue:
		reason, msg = musterv1beta1.ReasonWaitForRecovery, "Pods that were all ready are not any more"
	}
	if old != nil && old.Status == status {
		return false
	}
	return set(wl, musterv1beta1.WorkloadPodsReady, status, reason, msg, now)
}

// set sets a condition, stamped with now when its status changes.
func set(wl *musterv1beta1.Workload, typ string, status metav1.ConditionStatus, reason, msg string, now time.Time) bool {
	return meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: wl.Generation, LastTransitionTime: metav1.NewTime(now),
	})
}

// accumulateExecutionTime adds the admission ending now to the time the
// workload was admitted before: its maximum execution time counts every
// admission, so an evicted job does not start its allowance again. As in
// Kueue, it counts from the admission, not the reservation: the time its
// admission checks took is not its job's.
func accumulateExecutionTime(wl *musterv1beta1.Workload, now time.Time) {
	at := admittedAt(wl)
	if at.IsZero() || !now.After(at) {
		return
	}
	total := int32(min(int64(pastSeconds(wl))+int64(now.Sub(at)/time.Second), math.MaxInt32))
	wl.Status.AccumulatedPastExecutionTimeSeconds = &total
}

// ExecutionTime is how long the workload has been admitted, over all its
// admissions, by now.
func ExecutionTime(wl *musterv1beta1.Workload, now time.Time) time.Duration {
	d := time.Duration(pastSeconds(wl)) * time.Second
	if at := admittedAt(wl); !at.IsZero() && now.After(at) {
		d += now.Sub(at)
	}
	return d
}

func pastSeconds(wl *musterv1beta1.Workload) int32 {
	if p := wl.Status.AccumulatedPastExecutionTimeSeconds; p != nil {
		return *p
	}
	return 0
}

// admittedAt is when the workload holding quota was admitted; zero when it
// is not (waiting for its admission checks, or holding no quota).
func admittedAt(wl *musterv1beta1.Workload) time.Time {
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadAdmitted); c != nil &&
		c.Status == metav1.ConditionTrue && HasQuotaReservation(wl) {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}
