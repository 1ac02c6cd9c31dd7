package scheduling

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
	"github.com/musterhq/muster/controllers/metrics"
)

// +kubebuilder:rbac:groups=muster.dev,resources=cohorts,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=cohorts/status,verbs=get;update;patch

// CohortReconciler feeds Cohort objects (a parent, own quota, a weight) to
// the core. Every queue of the affected cohort tree is refreshed and its
// parked workloads tried again.
type CohortReconciler struct {
	client      client.Client
	state       *State
	fairSharing bool
	// generations remembers the spec each cohort was last applied with.
	generations map[string]int64
}

// Reconcile applies one Cohort.
func (r *CohortReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	return conflict.Requeue(ctx, res, err)
}

func (r *CohortReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.state.WaitSynced(ctx); err != nil {
		return ctrl.Result{}, err
	}
	before := r.queuesUnder(req.Name)
	var co musterv1beta1.Cohort
	if err := r.client.Get(ctx, req.NamespacedName, &co); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		r.state.Cache.DeleteCohort(req.Name)
		metrics.ForgetCohort(req.Name)
	} else {
		gen, seen := r.generations[co.Name]
		if !seen || gen != co.Generation {
			r.state.applyCohort(&co)
			r.generations[co.Name] = co.Generation
			affected := append(before, r.queuesUnder(req.Name)...)
			r.state.Queues.Unpark(affected...)
			r.state.refreshClusterQueues(affected...)
		}
		return ctrl.Result{}, r.updateStatus(ctx, &co)
	}
	delete(r.generations, req.Name)
	affected := append(before, r.queuesUnder(req.Name)...)
	if len(affected) > 0 {
		r.state.Queues.Unpark(affected...)
		r.state.refreshClusterQueues(affected...)
	}
	return ctrl.Result{}, nil
}

// updateStatus reports the cohort's fair-sharing share within its parent.
func (r *CohortReconciler) updateStatus(ctx context.Context, co *musterv1beta1.Cohort) error {
	if !r.fairSharing {
		return nil
	}
	share, _ := r.state.Cache.CohortShare(co.Name)
	fs := &musterv1beta1.FairSharingStatus{WeightedShare: share}
	if d, ok := r.state.Cache.DecayedUsageOf(co.Name, true); ok {
		fs.DecayedUsage, fs.LastSampled = decayedStatus(d)
	}
	if equality.Semantic.DeepEqual(co.Status.FairSharing, fs) {
		return nil
	}
	orig := co.DeepCopy()
	co.Status.FairSharing = fs
	return client.IgnoreNotFound(r.client.Status().Patch(ctx, co, client.MergeFrom(orig)))
}

// queuesUnder lists the ClusterQueues of the cohort tree holding a cohort.
func (r *CohortReconciler) queuesUnder(cohort string) []string {
	return r.state.Cache.CohortTreeQueues(cohort)
}

// SetupWithManager registers the reconciler.
func (r *CohortReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.generations = map[string]int64{}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.Cohort{}).
		WatchesRawSource(r.state.resyncSource("cohort")).
		Named("cohort").
		WithOptions(everyReplica(controller.Options{MaxConcurrentReconciles: 1}))
	if r.fairSharing {
		// Shares move with admissions: refresh the cohorts above a
		// workload's queue, coalesced.
		b = b.Watches(&musterv1beta1.Workload{}, coalescing(func(o client.Object) []reconcile.Request {
			wl := o.(*musterv1beta1.Workload)
			if wl.Status.Admission == nil {
				return nil
			}
			var reqs []reconcile.Request
			for _, name := range r.state.Cache.AncestorCohorts(string(wl.Status.Admission.ClusterQueue)) {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
			}
			return reqs
		}))
	}
	return b.Complete(r)
}
