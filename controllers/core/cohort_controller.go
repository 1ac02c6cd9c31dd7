package core

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// +kubebuilder:rbac:groups=muster.dev,resources=cohorts,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=cohorts/status,verbs=get;update;patch

// CohortReconciler feeds Cohort objects (a parent, own quota, a weight) to
// the core. Every queue of the affected cohort tree is refreshed and its
// parked workloads tried again.
type CohortReconciler struct {
	client client.Client
	state  *State
}

// Reconcile applies one Cohort.
func (r *CohortReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	before := r.queuesUnder(req.Name)
	var co musterv1beta1.Cohort
	if err := r.client.Get(ctx, req.NamespacedName, &co); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		r.state.Cache.DeleteCohort(req.Name)
	} else {
		r.state.applyCohort(&co)
	}
	affected := append(before, r.queuesUnder(req.Name)...)
	if len(affected) > 0 {
		r.state.Queues.Unpark(affected...)
		r.state.refreshClusterQueues(affected...)
	}
	return ctrl.Result{}, nil
}

// queuesUnder lists the ClusterQueues of the cohort tree holding a cohort.
func (r *CohortReconciler) queuesUnder(cohort string) []string {
	return r.state.Cache.CohortTreeQueues(cohort)
}

// SetupWithManager registers the reconciler.
func (r *CohortReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.Cohort{}).
		Named("cohort").
		Complete(r)
}
