package scheduling

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core/quota"
)

// +kubebuilder:rbac:groups=muster.dev,resources=admissionchecks,verbs=get;list;watch

// AdmissionCheckReconciler gives the core each AdmissionCheck: whether its
// controller answers it (a queue using one that does not admits nothing)
// and whether it provisions the nodes of its flavors (their placement then
// waits for it). The queues that name a check are refreshed when it
// changes, and their parked workloads tried again.
type AdmissionCheckReconciler struct {
	client client.Client
	state  *State
}

// Reconcile applies one AdmissionCheck.
func (r *AdmissionCheckReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.state.WaitSynced(ctx); err != nil {
		return ctrl.Result{}, err
	}
	var ac musterv1beta1.AdmissionCheck
	err := r.client.Get(ctx, req.NamespacedName, &ac)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	var affected []string
	if err != nil || !ac.DeletionTimestamp.IsZero() {
		affected = r.state.Cache.DeleteCheck(req.Name)
	} else {
		affected = r.state.applyCheck(&ac)
	}
	if len(affected) > 0 {
		r.state.Queues.Unpark(affected...)
		r.state.refreshClusterQueues(affected...)
	}
	return ctrl.Result{}, nil
}

// applyCheck records an AdmissionCheck in the core and returns the queues
// that name it.
func (s *State) applyCheck(ac *musterv1beta1.AdmissionCheck) []string {
	return s.Cache.SetCheck(ac.Name, toCheck(ac))
}

func toCheck(ac *musterv1beta1.AdmissionCheck) quota.Check {
	ch := quota.Check{
		Message:         "its controller " + ac.Spec.ControllerName + " has not marked it Active",
		DelaysPlacement: ac.Spec.ControllerName == musterv1beta1.ProvisioningRequestControllerName,
	}
	if c := meta.FindStatusCondition(ac.Status.Conditions, musterv1beta1.AdmissionCheckActive); c != nil {
		ch.Active, ch.Message = c.Status == "True", c.Message
	}
	return ch
}

// SetupWithManager registers the reconciler.
func (r *AdmissionCheckReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.AdmissionCheck{}).
		Named("admissioncheck").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(r)
}
