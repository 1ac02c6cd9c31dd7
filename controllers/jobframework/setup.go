package jobframework

import (
	"strings"

	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

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
// Workloads they own.
func (r *Reconciler[T]) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(r.kind.New()).
		Owns(&musterv1beta1.Workload{}).
		Named(strings.ReplaceAll(r.kind.Framework, "/", "-")).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
}
