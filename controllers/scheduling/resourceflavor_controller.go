package scheduling

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
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
	res, err := r.reconcile(ctx, req)
	return conflict.Requeue(ctx, res, err)
}

func (r *ResourceFlavorReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.state.WaitSynced(ctx); err != nil {
		return ctrl.Result{}, err
	}
	var rf musterv1beta1.ResourceFlavor
	err := r.client.Get(ctx, req.NamespacedName, &rf)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	gone := err != nil || !rf.DeletionTimestamp.IsZero()
	var affected []string
	if gone {
		// A flavor being deleted takes no new workloads; those admitted on
		// it keep it (its finalizer) until they are done.
		r.state.Cache.DeleteFlavor(req.Name)
		affected = r.state.Cache.QueuesUsingFlavor(req.Name)
	} else {
		affected = r.state.ApplyFlavor(&rf)
	}
	if len(affected) > 0 {
		r.state.Queues.Unpark(affected...)
		r.state.refreshClusterQueues(affected...)
	}
	if err != nil {
		log.FromContext(ctx).Info("Removed flavor", "flavor", klog.KRef("", req.Name), "clusterQueues", affected)
		return ctrl.Result{}, nil
	}
	return syncFinalizer(ctx, r.client, &rf, r.state.Cache.FlavorInUse(rf.Name))
}

// SetupWithManager registers the reconciler.
func (r *ResourceFlavorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.ResourceFlavor{}).
		// A flavor being deleted waits for the workloads admitted on it.
		Watches(&musterv1beta1.Workload{}, coalescing(func(o client.Object) []reconcile.Request {
			wl := o.(*musterv1beta1.Workload)
			if wl.Status.Admission == nil {
				return nil
			}
			seen := map[string]bool{}
			var reqs []reconcile.Request
			for _, psa := range wl.Status.Admission.PodSetAssignments {
				for _, f := range psa.Flavors {
					if !seen[string(f)] {
						seen[string(f)] = true
						reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: string(f)}})
					}
				}
			}
			return reqs
		})).
		WatchesRawSource(r.state.resyncSource("resourceflavor")).
		Named("resourceflavor").
		WithOptions(everyReplica(controller.Options{})).
		Complete(r)
}
