package scheduling

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// +kubebuilder:rbac:groups=muster.dev,resources=workloadpriorityclasses,verbs=get;list;watch

// PriorityClassReconciler gives the core each WorkloadPriorityClass's
// minimum runtime, which protects the class's admitted workloads from
// preemption. A change applies at once to workloads already admitted: the
// core reads it by class name in each cycle.
type PriorityClassReconciler struct {
	client client.Client
	state  *State
}

// Reconcile applies one WorkloadPriorityClass.
func (r *PriorityClassReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.state.WaitSynced(ctx); err != nil {
		return ctrl.Result{}, err
	}
	var wpc musterv1beta1.WorkloadPriorityClass
	err := r.client.Get(ctx, req.NamespacedName, &wpc)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	if err != nil {
		wpc = musterv1beta1.WorkloadPriorityClass{}
		wpc.Name = req.Name
	}
	r.state.applyPriorityClass(&wpc)
	// A preemptor waiting for a protected victim may go now (or later).
	r.state.Queues.Notify()
	return ctrl.Result{}, nil
}

// applyPriorityClass records the class's minimum runtime in the core.
func (s *State) applyPriorityClass(wpc *musterv1beta1.WorkloadPriorityClass) {
	var minRuntime *int32
	if p := wpc.Preemption; p != nil {
		minRuntime = p.MinRuntimeSeconds
	}
	s.Cache.SetPriorityClassMinRuntime(wpc.Name, seconds(minRuntime))
}

// SetupWithManager registers the reconciler.
func (r *PriorityClassReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.WorkloadPriorityClass{}).
		Named("workloadpriorityclass").
		WithOptions(everyReplica(controller.Options{})).
		Complete(r)
}
