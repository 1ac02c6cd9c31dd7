package jobframework

import (
	"context"

	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
)

// A Workload's quota is in use for as long as its job's pods run, which can
// outlast the Workload object: deleting an admitted Workload (by hand, or by
// the garbage collector after its job) must not hand its quota to another
// job while the pods still hold the GPUs. The job reconciler's finalizer on
// every Workload it creates keeps the Workload, and so its quota in the
// scheduler's cache, until the job is stopped.

// releaseDeleted stops the job of a Workload being deleted and then lets
// the Workload go. A Workload that holds no quota goes at once; the job then
// gets a new Workload and queues again.
func (r *Reconciler[T]) releaseDeleted(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload) error {
	if _, _, finished := job.Finished(); finished || !workload.HoldsQuota(wl) {
		return r.removeFinalizer(ctx, wl)
	}
	if wrote, err := r.suspendAndRestore(ctx, job, wl); wrote || err != nil {
		return err
	}
	if job.IsActive() {
		log.FromContext(ctx).V(2).Info("Waiting for the pods of a deleted workload to stop", "workload", klog.KObj(wl))
		return nil
	}
	return r.removeFinalizer(ctx, wl)
}

// ensureFinalizer adds the finalizer to a Workload that lacks it (created
// before Muster had it), reporting whether it wrote.
func (r *Reconciler[T]) ensureFinalizer(ctx context.Context, wl *musterv1beta1.Workload) (bool, error) {
	if workload.IsFinished(wl) || controllerutil.ContainsFinalizer(wl, musterv1beta1.ResourceInUseFinalizer) {
		return false, nil
	}
	orig := wl.DeepCopy()
	controllerutil.AddFinalizer(wl, musterv1beta1.ResourceInUseFinalizer)
	return true, r.client.Patch(ctx, wl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

func (r *Reconciler[T]) removeFinalizer(ctx context.Context, wl *musterv1beta1.Workload) error {
	return RemoveFinalizer(ctx, r.client, wl)
}

// RemoveFinalizer lets a Workload whose pods no longer run go, and with it
// its quota.
func RemoveFinalizer(ctx context.Context, c client.Client, wl *musterv1beta1.Workload) error {
	if !controllerutil.ContainsFinalizer(wl, musterv1beta1.ResourceInUseFinalizer) {
		return nil
	}
	orig := wl.DeepCopy()
	controllerutil.RemoveFinalizer(wl, musterv1beta1.ResourceInUseFinalizer)
	err := c.Patch(ctx, wl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	if err == nil {
		log.FromContext(ctx).V(2).Info("Released the quota of a deleted workload", "workload", klog.KObj(wl))
	}
	return client.IgnoreNotFound(err)
}
