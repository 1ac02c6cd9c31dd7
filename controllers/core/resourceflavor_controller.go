package core

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// +kubebuilder:rbac:groups=muster.dev,resources=resourceflavors,verbs=get;list;watch;update;patch

// ResourceFlavorReconciler feeds ResourceFlavors to the core. A queue whose
// flavor appears or disappears is refreshed, and its parked workloads tried
// again.
type ResourceFlavorReconciler struct {
	client client.Client
	state  *State
}

// Reconcile applies one ResourceFlavor.
func (r *ResourceFlavorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var rf musterv1beta1.ResourceFlavor
	var affected []string
	if err := r.client.Get(ctx, req.NamespacedName, &rf); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		r.state.Cache.DeleteFlavor(req.Name)
		affected = r.state.Cache.QueuesUsingFlavor(req.Name)
		log.FromContext(ctx).Info("Removed flavor", "flavor", req.Name, "clusterQueues", affected)
	} else {
		affected = r.state.applyFlavor(&rf)
	}
	if len(affected) > 0 {
		r.state.Queues.Unpark(affected...)
		r.state.refreshClusterQueues(affected...)
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler.
func (r *ResourceFlavorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.ResourceFlavor{}).
		Named("resourceflavor").
		Complete(r)
}
