package multicluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/internal/workload"
)

// errJobGone: the worker's job was deleted there after it adopted its
// workload.
var errJobGone = errors.New("the job is gone in the worker cluster")

// errJobBlocked: the job cannot be created in the worker (it does not
// serve the kind, or a job of that name that Muster did not dispatch is
// there); another worker may take it.
var errJobBlocked = errors.New("the job cannot be created there")

// jobWait is how soon a withdrawn workload is looked at again while its
// job is still being stopped in the manager.
const jobWait = time.Second

// sameReservation reports whether a copy was made for the workload's
// current reservation.
func sameReservation(cp, wl *musterv1beta1.Workload) bool {
	return cp.Annotations[musterv1beta1.ReservationAnnotation] == workload.ReservationID(wl)
}

// ensureCopy makes sure the worker has a copy of the workload made for its
// current reservation, returning it once it is there (nil while it is
// being created or replaced).
func (d *Dispatcher) ensureCopy(ctx context.Context, rem *remote, wl *musterv1beta1.Workload) (*musterv1beta1.Workload, error) {
	cp, err := rem.workload(ctx, wl.Namespace, wl.Name)
	switch {
	case err != nil:
		return nil, err
	case cp == nil:
		return nil, d.createCopy(ctx, rem, wl)
	case !cp.DeletionTimestamp.IsZero():
		return nil, nil // its deletion's event brings the workload back
	case !sameReservation(cp, wl):
		return nil, d.removeFrom(ctx, rem, client.ObjectKeyFromObject(wl), nil, false)
	}
	return cp, nil
}

// createCopy creates the workload's copy in a worker: the same name,
// namespace and spec (the worker has the same namespace and LocalQueue),
// stamped with the reservation and the manager's origin.
func (d *Dispatcher) createCopy(ctx context.Context, rem *remote, wl *musterv1beta1.Workload) error {
	cp := &musterv1beta1.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: wl.Namespace,
			Name:      wl.Name,
			Labels:    map[string]string{musterv1beta1.MultiClusterOriginLabel: d.Pool.origin},
			Annotations: map[string]string{
				musterv1beta1.ReservationAnnotation: workload.ReservationID(wl),
			},
		},
		Spec: *wl.Spec.DeepCopy(),
	}
	for k, v := range wl.Labels {
		cp.Labels[k] = v
	}
	for _, k := range []string{musterv1beta1.JobCreatedAtAnnotation, musterv1beta1.PodFailuresToleratedAnnotation} {
		if v, ok := wl.Annotations[k]; ok {
			cp.Annotations[k] = v
		}
	}
	if err := rem.client.Create(ctx, cp); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	log.FromContext(ctx).V(2).Info("Sent a copy of the workload", "workload", klog.KObj(wl), "cluster", rem.name)
	return nil
}

// ensureRemoteJob creates the job in the worker its workload runs in,
// unless it is there. adopted says the worker's copy was adopted by a job
// already: that job gone means it was deleted there.
func (d *Dispatcher) ensureRemoteJob(ctx context.Context, rem *remote, dp *dispatch, adopted bool) error {
	if dp.job == nil {
		return nil
	}
	rem.watchJobs(dp.kind.GVK)
	existing, err := d.remoteJob(ctx, rem, dp.kind.GVK, types.NamespacedName{Namespace: dp.job.GetNamespace(), Name: dp.job.GetName()})
	switch {
	case meta.IsNoMatchError(err):
		return fmt.Errorf("%w: it does not serve %s", errJobBlocked, dp.kind.GVK.GroupKind())
	case err != nil:
		return err
	case existing != nil && !d.ours(existing, dp.wl.Name):
		return fmt.Errorf("%w: a %s %s that Muster did not dispatch exists there", errJobBlocked, dp.kind.GVK.Kind, klog.KObj(existing))
	case existing != nil && !existing.GetDeletionTimestamp().IsZero():
		return fmt.Errorf("the %s %s of an earlier dispatch is still being deleted there", dp.kind.GVK.Kind, klog.KObj(existing))
	case existing != nil:
		return nil
	case adopted:
		return errJobGone
	}
	cp, err := dp.kind.RemoteCopy(dp.job, dp.wl.Name, d.Pool.origin)
	if err != nil {
		return err
	}
	if err := rem.client.Create(ctx, cp); meta.IsNoMatchError(err) {
		return fmt.Errorf("%w: it does not serve %s", errJobBlocked, dp.kind.GVK.GroupKind())
	} else if client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	log.FromContext(ctx).Info("Created the job in a worker cluster", "job", klog.KObj(cp), "kind", dp.kind.GVK.Kind, "cluster", rem.name)
	return nil
}

// ours reports whether a worker's job is the one this manager dispatched
// for a workload.
func (d *Dispatcher) ours(job client.Object, wl string) bool {
	return job.GetLabels()[musterv1beta1.MultiClusterOriginLabel] == d.Pool.origin &&
		jobframework.PrebuiltWorkloadName(job) == wl
}

// remoteJob reads a worker's job; nil if there is none.
func (d *Dispatcher) remoteJob(ctx context.Context, rem *remote, gvk schema.GroupVersionKind, key types.NamespacedName) (*unstructured.Unstructured, error) {
	job := &unstructured.Unstructured{}
	job.SetGroupVersionKind(gvk)
	err := rem.client.Get(ctx, key, job)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", rem.name, err)
	}
	return job, nil
}

// mirror copies the worker's job status onto the manager's job: once the
// manager's job runs (unsuspended on admission), or, final, when the
// worker's finished.
func (d *Dispatcher) mirror(ctx context.Context, rem *remote, dp *dispatch, final bool) error {
	if dp.job == nil || (dp.kind.Suspended(dp.job) && !final) {
		return nil
	}
	src, err := d.remoteJob(ctx, rem, dp.kind.GVK, client.ObjectKeyFromObject(dp.job))
	if err != nil || src == nil || !d.ours(src, dp.wl.Name) {
		return err
	}
	status, ok := src.Object["status"].(map[string]any)
	if !ok {
		return nil
	}
	status = keepCounters(dp.job.Object["status"], status)
	if equality.Semantic.DeepEqual(dp.job.Object["status"], status) {
		return nil
	}
	dp.job.Object["status"] = status
	return d.Client.Status().Update(ctx, dp.job)
}

// withdraw takes back what was dispatched for a workload that no longer
// holds quota (evicted, finished, deleted), and clears the status mirrored
// onto its stopped job, which no longer runs anywhere: the job reconciler
// waits for a stopped job's pods to go before it releases the quota.
func (d *Dispatcher) withdraw(ctx context.Context, dp *dispatch) (ctrl.Result, error) {
	if err := d.removeEverywhere(ctx, client.ObjectKeyFromObject(dp.wl), dp.job); err != nil {
		return ctrl.Result{}, err
	}
	job := dp.job
	if job == nil || workload.IsFinished(dp.wl) || !dp.kind.Dispatched(job) {
		return ctrl.Result{}, nil
	}
	if !dp.kind.Suspended(job) {
		return ctrl.Result{RequeueAfter: jobWait}, nil
	}
	if !stopStatus(job) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, d.Client.Status().Update(ctx, job)
}

// removeEverywhere takes back a workload's copies and job from every
// worker Muster reaches; those it does not are taken back when they answer
// again.
func (d *Dispatcher) removeEverywhere(ctx context.Context, key types.NamespacedName, job *unstructured.Unstructured) error {
	var errs []error
	for _, rem := range d.Pool.all() {
		if rem.health().usable {
			errs = appendErr(errs, rem.name, d.removeFrom(ctx, rem, key, job, true))
		}
	}
	return errors.Join(errs...)
}

// removeFrom deletes a workload's copy in a worker and the job created
// there for it (the manager's job's namesake, or the copy's owner).
// thorough also looks for the job without a copy (deleted in the worker
// by hand, or before its job adopted it), at the price of a request to
// the worker: what withdraws a workload does, not the routine sweep of
// the losing copies.
func (d *Dispatcher) removeFrom(ctx context.Context, rem *remote, key types.NamespacedName, job *unstructured.Unstructured, thorough bool) error {
	cp, err := rem.workload(ctx, key.Namespace, key.Name)
	if err != nil || (cp == nil && (!thorough || job == nil)) {
		return err
	}
	gvk, jobKey, ok := remoteJobOf(cp, job)
	if ok {
		if err := d.deleteRemoteJob(ctx, rem, gvk, jobKey, key.Name); err != nil {
			return err
		}
	}
	if cp == nil || !cp.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := rem.client.Delete(ctx, cp); client.IgnoreNotFound(err) != nil {
		return err
	}
	log.FromContext(ctx).V(2).Info("Took back a copy of the workload", "workload", klog.KObj(cp), "cluster", rem.name)
	return nil
}

// remoteJobOf is the job a copy may have in its worker.
func remoteJobOf(cp *musterv1beta1.Workload, job *unstructured.Unstructured) (schema.GroupVersionKind, types.NamespacedName, bool) {
	if job != nil {
		return job.GroupVersionKind(), client.ObjectKeyFromObject(job), true
	}
	if cp == nil {
		return schema.GroupVersionKind{}, types.NamespacedName{}, false
	}
	owner := metav1.GetControllerOf(cp)
	if owner == nil {
		return schema.GroupVersionKind{}, types.NamespacedName{}, false
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return schema.GroupVersionKind{}, types.NamespacedName{}, false
	}
	return gv.WithKind(owner.Kind), types.NamespacedName{Namespace: cp.Namespace, Name: owner.Name}, true
}

// deleteRemoteJob deletes the worker's job if this manager created it for
// the workload, with its pods.
func (d *Dispatcher) deleteRemoteJob(ctx context.Context, rem *remote, gvk schema.GroupVersionKind, key types.NamespacedName, wl string) error {
	job, err := d.remoteJob(ctx, rem, gvk, key)
	if err != nil || job == nil || !job.GetDeletionTimestamp().IsZero() {
		return err
	}
	if !d.ours(job, wl) {
		log.FromContext(ctx).V(2).Info("Left alone a worker's job this manager did not dispatch for the workload", "job", klog.KObj(job), "cluster", rem.name)
		return nil
	}
	err = rem.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	log.FromContext(ctx).Info("Deleted the job in a worker cluster", "job", klog.KObj(job), "kind", gvk.Kind, "cluster", rem.name)
	return nil
}

// The status counters a job's API server never lets go down (a batch/v1
// Job managed elsewhere: succeeded and failed); a job that ran in a worker
// before keeps its counts when another runs it.
var counters = []string{"succeeded", "failed"}

// keepCounters is the worker's status with the manager's counters where
// those are higher.
func keepCounters(old any, status map[string]any) map[string]any {
	prev, ok := old.(map[string]any)
	if !ok {
		return status
	}
	out := runtime.DeepCopyJSON(status)
	for _, k := range counters {
		p, _ := prev[k].(int64)
		if n, _ := out[k].(int64); p > n {
			out[k] = p
		}
	}
	return out
}

// The status fields that say a job's pods run (a batch/v1 Job's, a
// Kubeflow job's per replica type): a stopped job that no longer runs
// anywhere has them at zero, and the job reconciler waits for that before
// it hands the quota back.
var runningFields = []string{"active", "ready", "terminating"}

// stopStatus zeroes what the mirrored status says runs, keeping the rest
// (counters and conditions the job's API server will not let go), and
// reports whether it changed anything.
func stopStatus(job *unstructured.Unstructured) bool {
	status, ok := job.Object["status"].(map[string]any)
	if !ok {
		return false
	}
	changed := zeroRunning(status)
	if _, has := status["uncountedTerminatedPods"]; has {
		delete(status, "uncountedTerminatedPods")
		changed = true
	}
	if rs, ok := status["replicaStatuses"].(map[string]any); ok {
		for _, r := range rs {
			if m, ok := r.(map[string]any); ok {
				changed = zeroRunning(m) || changed
			}
		}
	}
	return changed
}

func zeroRunning(m map[string]any) bool {
	changed := false
	for _, k := range runningFields {
		if n, ok := m[k].(int64); ok && n != 0 {
			m[k] = int64(0)
			changed = true
		}
	}
	return changed
}
