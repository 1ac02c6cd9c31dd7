package jobframework

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/wlstatus"
	"github.com/musterhq/muster/internal/workload"
)

// A job's runtime bound, its maximum execution time: Kueue's label, in
// seconds, under Muster's prefix or Kueue's, or a duration annotation that
// reads better for long jobs ("36h"). When more than one is given the
// shortest applies.
const (
	MaxExecTimeLabel      = "muster.dev/max-exec-time-seconds"
	kueueMaxExecTimeLabel = "kueue.x-k8s.io/max-exec-time-seconds"
	MaxRuntimeAnnotation  = "muster.dev/max-runtime"
)

// maxExecutionTime reads the job's runtime bound in seconds, nil when it
// declares none, or says which field is wrong.
func maxExecutionTime(obj client.Object, opts Options) (*int32, field.ErrorList) {
	var bound *int32
	var errs field.ErrorList
	take := func(secs int64) {
		if bound == nil || int32(secs) < *bound {
			bound = ptr.To(int32(secs))
		}
	}
	labels := []string{MaxExecTimeLabel}
	if opts.AcceptKueueQueueLabel {
		labels = append(labels, kueueMaxExecTimeLabel)
	}
	for _, l := range labels {
		v, ok := obj.GetLabels()[l]
		if !ok {
			continue
		}
		secs, err := strconv.ParseInt(v, 10, 32)
		if err != nil || secs < 1 {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "labels").Key(l), v, "must be a whole number of seconds, from 1 to 2147483647 (68 years)"))
			continue
		}
		take(secs)
	}
	if v, ok := obj.GetAnnotations()[MaxRuntimeAnnotation]; ok {
		// A duration too large for time.Duration (over 292 years) fails
		// to parse: it is as much "over 68 years" as one that parses.
		if d, err := time.ParseDuration(v); err == nil && d >= time.Second && d.Seconds() <= math.MaxInt32 {
			take(int64(d / time.Second))
		} else {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(MaxRuntimeAnnotation), v,
				`must be a duration from 1s to 68 years, e.g. "90m" or "36h"`))
		}
	}
	return bound, errs
}

// validateRuntimeBound refuses a malformed runtime bound at submission:
// silently ignoring it would let the job backfill nothing and run forever.
func validateRuntimeBound(obj client.Object, opts Options) field.ErrorList {
	_, errs := maxExecutionTime(obj, opts)
	return errs
}

// runtimeBoundChanged reports whether an update touches the labels or the
// annotation a runtime bound is read from.
func runtimeBoundChanged(oldObj, newObj client.Object) bool {
	for _, l := range []string{MaxExecTimeLabel, kueueMaxExecTimeLabel} {
		if oldObj.GetLabels()[l] != newObj.GetLabels()[l] {
			return true
		}
	}
	return oldObj.GetAnnotations()[MaxRuntimeAnnotation] != newObj.GetAnnotations()[MaxRuntimeAnnotation]
}

// enforceMaxExecutionTime deactivates an admitted workload that has held
// quota longer than its maximum execution time (its own, else its
// ClusterQueue's), and otherwise says when to look again.
func (r *Reconciler[T]) enforceMaxExecutionTime(ctx context.Context, wl *musterv1beta1.Workload) (time.Duration, bool, error) {
	limit, err := r.maxExecutionTimeOf(ctx, wl)
	if err != nil || limit <= 0 {
		return 0, false, err
	}
	now := r.opts.Clock.Now()
	if left := limit - workload.ExecutionTime(wl, now); left > 0 {
		return left, false, nil
	}
	msg := fmt.Sprintf("Deactivated: held quota for %s, past its maximum execution time of %s",
		workload.ExecutionTime(wl, now).Round(time.Second), limit)
	orig := wl.DeepCopy()
	if _, err := wlstatus.Patch(ctx, r.client, wl, func(wl *musterv1beta1.Workload) bool {
		return workload.Deactivate(wl, musterv1beta1.ReasonMaximumExecutionTimeExceeded, msg, now)
	}); err != nil {
		return 0, true, err
	}
	reportEviction(orig, musterv1beta1.ReasonMaximumExecutionTimeExceeded, now)
	wl.Spec.Active = ptr.To(false)
	if err := r.client.Update(ctx, wl); err != nil {
		return 0, true, err
	}
	r.recorder.Eventf(wl, nil, "Warning", musterv1beta1.ReasonMaximumExecutionTimeExceeded, "Deactivate", msg)
	log.FromContext(ctx).Info("Deactivated workload past its maximum execution time", "workload", klog.KObj(wl), "limit", limit)
	return 0, true, nil
}

// finishDeactivation completes a deactivation whose second write
// (spec.active=false) failed or is someone else's to make: the status says
// evicted past the maximum execution time, or rejected by an admission
// check, while the quota is still held, but the workload is active. It
// runs before the job is stopped and the quota released, so the workload
// is never queued again on its own. It reports whether it wrote.
func (r *Reconciler[T]) finishDeactivation(ctx context.Context, wl *musterv1beta1.Workload) (bool, error) {
	return FinishDeactivation(ctx, r.client, wl)
}

// FinishDeactivation is finishDeactivation for the controllers of
// Workloads without a GenericJob (pod groups).
func FinishDeactivation(ctx context.Context, c client.Client, wl *musterv1beta1.Workload) (bool, error) {
	cond := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted)
	if !workload.IsEvicting(wl) || !workload.IsActive(wl) || cond == nil || !deactivating(cond.Reason) {
		return false, nil
	}
	wl.Spec.Active = ptr.To(false)
	return true, c.Update(ctx, wl)
}

// deactivating reports whether an eviction's reason deactivates the
// workload: it must not be queued again on its own.
func deactivating(reason string) bool {
	return reason == musterv1beta1.ReasonMaximumExecutionTimeExceeded || reason == musterv1beta1.ReasonAdmissionCheckRejected
}

// maxExecutionTimeOf is the workload's own maximum execution time, else
// its ClusterQueue's default; 0 when neither sets one.
func (r *Reconciler[T]) maxExecutionTimeOf(ctx context.Context, wl *musterv1beta1.Workload) (time.Duration, error) {
	if s := wl.Spec.MaximumExecutionTimeSeconds; s != nil {
		return time.Duration(*s) * time.Second, nil
	}
	if wl.Status.Admission == nil {
		return 0, nil
	}
	var cq musterv1beta1.ClusterQueue
	if err := r.client.Get(ctx, client.ObjectKey{Name: string(wl.Status.Admission.ClusterQueue)}, &cq); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	return time.Duration(ptr.Deref(cq.Spec.MaximumExecutionTimeSeconds, 0)) * time.Second, nil
}

// requeueBy shortens a result's requeue to d when d comes first.
func requeueBy(res ctrl.Result, d time.Duration) ctrl.Result {
	if d > 0 && (res.RequeueAfter <= 0 || d < res.RequeueAfter) {
		res.RequeueAfter = d
	}
	return res
}
