package jobframework

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/metrics"
	"github.com/musterhq/muster/controllers/wlstatus"
	"github.com/musterhq/muster/internal/workload"
)

// watchPodsReady keeps a running job's PodsReady condition up to date and,
// when its pods are not all ready within the timeout after admission,
// evicts it: the job is stopped and its workload requeued after a backoff,
// or deactivated past the backoff limit. It is the guard against the last
// deadlock: quota admitted, but the pods cannot all start.
func (r *Reconciler[T]) watchPodsReady(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload) (ctrl.Result, error) {
	o := r.opts.PodsReady
	if !o.Enable {
		return ctrl.Result{}, nil
	}
	ready := job.PodsReady()
	if err := r.setPodsReady(ctx, wl, ready); err != nil || ready {
		return ctrl.Result{}, err
	}
	deadline, ok := r.podsReadyDeadline(wl)
	if !ok {
		return ctrl.Result{}, nil
	}
	if left := deadline.Sub(r.opts.Clock.Now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	return ctrl.Result{}, r.evictForPodsReady(ctx, wl)
}

// podsReadyDeadline is when a workload whose pods are not all ready is
// evicted: timeout after its admission while its pods start, or
// recoveryTimeout after pods that were all ready stopped being so (never,
// without a recoveryTimeout, as in Kueue).
func (r *Reconciler[T]) podsReadyDeadline(wl *musterv1beta1.Workload) (time.Time, bool) {
	o := r.opts.PodsReady
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadPodsReady); c != nil &&
		c.Reason == musterv1beta1.ReasonWaitForRecovery {
		if o.RecoveryTimeout == nil {
			return time.Time{}, false
		}
		return c.LastTransitionTime.Add(*o.RecoveryTimeout), true
	}
	admitted := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadAdmitted)
	if admitted == nil {
		return time.Time{}, false
	}
	return admitted.LastTransitionTime.Add(o.Timeout), true
}

// setPodsReady writes the PodsReady condition when it changed.
func (r *Reconciler[T]) setPodsReady(ctx context.Context, wl *musterv1beta1.Workload, ready bool) error {
	now := r.opts.Clock.Now()
	// Ready for the first time since admission, not back from a loss.
	old := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadPodsReady)
	first := old == nil || old.Reason == musterv1beta1.ReasonWaitForStart
	wrote, err := wlstatus.Patch(ctx, r.client, wl, func(wl *musterv1beta1.Workload) bool { return workload.SetPodsReady(wl, ready, now) })
	if err == nil && wrote && ready && first {
		metrics.ReportReady(wl, now)
	}
	return err
}

// evictForPodsReady evicts the workload with a requeue backoff, or
// deactivates it past the limit.
func (r *Reconciler[T]) evictForPodsReady(ctx context.Context, wl *musterv1beta1.Workload) error {
	o := r.opts.PodsReady
	now := r.opts.Clock.Now()
	count := workload.RequeueCount(wl) + 1
	if o.BackoffLimit != nil && count > *o.BackoffLimit {
		return r.deactivate(ctx, wl, count-1)
	}
	delay := Backoff(o.BackoffBase, o.BackoffMax, count)
	orig := wl.DeepCopy()
	msg := fmt.Sprintf("Not all pods were ready within %s of admission; requeued in %s (requeue %d)", o.Timeout, delay, count)
	if _, err := wlstatus.Patch(ctx, r.client, wl, func(wl *musterv1beta1.Workload) bool {
		return workload.EvictWithBackoff(wl, msg, count, now.Add(delay), now)
	}); err != nil {
		return err
	}
	reportEviction(orig, musterv1beta1.ReasonPodsReadyTimeout, now)
	r.recorder.Eventf(wl, nil, "Warning", musterv1beta1.ReasonPodsReadyTimeout, "Evict", msg)
	log.FromContext(ctx).Info("Evicted workload whose pods were not ready in time", "workload", klog.KObj(wl), "requeues", count, "backoff", delay)
	return nil
}

// deactivate takes a workload out of its queue for good (spec.active=false)
// after too many PodsReady timeouts; its job is stopped and stays
// suspended until a user reactivates it.
func (r *Reconciler[T]) deactivate(ctx context.Context, wl *musterv1beta1.Workload, requeues int32) error {
	if !workload.IsActive(wl) {
		return nil
	}
	msg := fmt.Sprintf("Deactivated: pods were not ready in time after %d requeues (waitForPodsReady.requeuingStrategy.backoffLimitCount)", requeues)
	orig := wl.DeepCopy()
	now := r.opts.Clock.Now()
	if _, err := wlstatus.Patch(ctx, r.client, wl, func(wl *musterv1beta1.Workload) bool {
		return workload.Deactivate(wl, musterv1beta1.ReasonRequeuingLimitExceeded, msg, now)
	}); err != nil {
		return err
	}
	reportEviction(orig, musterv1beta1.ReasonRequeuingLimitExceeded, now)
	wl.Spec.Active = ptr.To(false)
	if err := r.client.Update(ctx, wl); err != nil {
		return err
	}
	r.recorder.Eventf(wl, nil, "Warning", musterv1beta1.ReasonRequeuingLimitExceeded, "Deactivate", msg)
	log.FromContext(ctx).Info("Deactivated workload", "workload", klog.KObj(wl), "requeues", requeues)
	return nil
}

// Backoff is the requeue delay after the n-th PodsReady timeout: base
// doubled n-1 times, at most max.
func Backoff(base, maxDelay time.Duration, n int32) time.Duration {
	d := base
	for i := int32(1); i < n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}
