package jobframework

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// A prebuilt Workload is one that exists before its job: a manager
// cluster's Muster creates it in a worker cluster, lets the worker's Muster
// reserve quota for it, and only then creates the job there, naming the
// Workload in an annotation. The job reconciler adopts that Workload instead of
// creating one, and never creates one for such a job: until the Workload
// exists the job stays suspended.

// PrebuiltWorkloadName is the Workload a job names as already built for
// it, or "": Muster's annotation or Kueue's, or a label of either key.
func PrebuiltWorkloadName(obj client.Object) string {
	for _, key := range []string{musterv1beta1.PrebuiltWorkloadAnnotation, musterv1beta1.KueuePrebuiltWorkloadAnnotation} {
		if n := obj.GetAnnotations()[key]; n != "" {
			return n
		}
		if n := obj.GetLabels()[key]; n != "" {
			return n
		}
	}
	return ""
}

// prebuiltWorkload returns the job's prebuilt Workload, adopting it if no
// object controls it yet; nil while it does not exist.
func (r *Reconciler[T]) prebuiltWorkload(ctx context.Context, obj client.Object, name string) (*musterv1beta1.Workload, error) {
	var wl musterv1beta1.Workload
	err := r.client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, &wl)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if metav1.IsControlledBy(&wl, obj) {
		return &wl, nil
	}
	if owner := metav1.GetControllerOf(&wl); owner != nil {
		return nil, fmt.Errorf("prebuilt workload %s is controlled by %s %s, not by %s %s",
			klog.KObj(&wl), owner.Kind, owner.Name, r.kind.GVK.Kind, obj.GetName())
	}
	orig := wl.DeepCopy()
	if err := controllerutil.SetControllerReference(obj, &wl, r.client.Scheme()); err != nil {
		return nil, err
	}
	if err := r.client.Patch(ctx, &wl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, err
	}
	log.FromContext(ctx).Info("Adopted the job's prebuilt workload", "workload", klog.KObj(&wl))
	return &wl, nil
}

// awaitPrebuilt keeps a job whose prebuilt Workload does not exist (yet)
// suspended, and looks again shortly: nothing watches for a Workload that
// no job controls.
func (r *Reconciler[T]) awaitPrebuilt(ctx context.Context, job GenericJob) (ctrl.Result, error) {
	if !job.IsSuspended() && !stoppedByDeletion(job) {
		return ctrl.Result{}, r.suspendUngated(ctx, job)
	}
	log.FromContext(ctx).V(2).Info("Waiting for the job's prebuilt workload", "workload", PrebuiltWorkloadName(job.Object()))
	return ctrl.Result{RequeueAfter: composeRetry}, nil
}
