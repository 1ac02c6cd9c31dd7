package jobframework

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// SetupOwnerIndex indexes Workloads by their controlling job, so a deleted
// job's workloads can be found without knowing its UID.
func SetupOwnerIndex(ctx context.Context, mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(ctx, &musterv1beta1.Workload{}, OwnerIndex, OwnerIndexValues)
}

// OwnerIndexValues is the owner index's value of a Workload: its
// controlling job, if any.
func OwnerIndexValues(o client.Object) []string {
	ref := metav1.GetControllerOf(o)
	if ref == nil {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil
	}
	return []string{OwnerIndexKey(gv.WithKind(ref.Kind), ref.Name)}
}

// SetupWithManager registers the reconciler: it watches the jobs and the
// Workloads they own, and the ClusterQueues whose default maximum
// execution time changes (their admitted jobs may be past the new one).
func (r *Reconciler[T]) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(r.kind.New()).
		Owns(&musterv1beta1.Workload{}).
		Watches(&musterv1beta1.ClusterQueue{}, handler.EnqueueRequestsFromMapFunc(r.jobsBoundByQueue),
			builder.WithPredicates(maxExecutionTimeChanged)).
		Named(strings.ReplaceAll(r.kind.Framework, "/", "-")).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
}

// maxExecutionTimeChanged passes a ClusterQueue update that changes its
// default maximum execution time (rare: a full list per change is fine).
var maxExecutionTimeChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*musterv1beta1.ClusterQueue), e.ObjectNew.(*musterv1beta1.ClusterQueue)
		return !ptr.Equal(o.Spec.MaximumExecutionTimeSeconds, n.Spec.MaximumExecutionTimeSeconds)
	},
}

// jobsBoundByQueue are the jobs of this kind admitted to the ClusterQueue
// whose Workloads declare no bound of their own, so the queue's applies.
func (r *Reconciler[T]) jobsBoundByQueue(ctx context.Context, o client.Object) []reconcile.Request {
	var wls musterv1beta1.WorkloadList
	if err := r.client.List(ctx, &wls); err != nil {
		log.FromContext(ctx).Error(err, "Listing workloads for a changed maximum execution time", "clusterQueue", klog.KObj(o))
		return nil
	}
	var out []reconcile.Request
	for i := range wls.Items {
		wl := &wls.Items[i]
		if wl.Status.Admission == nil || string(wl.Status.Admission.ClusterQueue) != o.GetName() || wl.Spec.MaximumExecutionTimeSeconds != nil {
			continue
		}
		ref := metav1.GetControllerOf(wl)
		if owner := OwnerIndexValues(wl); len(owner) == 0 || owner[0] != OwnerIndexKey(r.kind.GVK, ref.Name) {
			continue // not controlled by a job of this kind
		}
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: wl.Namespace, Name: ref.Name}})
	}
	return out
}
