package scheduling

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
	"github.com/musterhq/muster/controllers/wlstatus"
	"github.com/musterhq/muster/internal/workload"
)

// +kubebuilder:rbac:groups=muster.dev,resources=workloads,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=muster.dev,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// WorkloadReconciler keeps the core's cache and queues in line with the
// Workloads, and tells a workload whose queue does not exist why it waits.
type WorkloadReconciler struct {
	client client.Client
	state  *State
	clock  clock.PassiveClock
}

// Reconcile applies one Workload to the core.
func (r *WorkloadReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	return conflict.Requeue(ctx, res, err)
}

func (r *WorkloadReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.state.WaitSynced(ctx); err != nil {
		return ctrl.Result{}, err
	}
	var wl musterv1beta1.Workload
	if err := r.client.Get(ctx, req.NamespacedName, &wl); err != nil {
		if apierrors.IsNotFound(err) {
			r.state.Forget(keyOf(req.NamespacedName))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	var ns corev1.Namespace
	if err := r.client.Get(ctx, client.ObjectKey{Name: wl.Namespace}, &ns); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	now := r.clock.Now()
	if until := r.state.ApplyWorkload(&wl, ns.Labels, now); !until.IsZero() {
		msg := fmt.Sprintf("Waiting for the requeue backoff to end at %s", until.UTC().Format(time.RFC3339))
		return ctrl.Result{RequeueAfter: until.Sub(now)}, setPending(ctx, r.client, &wl, musterv1beta1.ReasonBackoff, msg, now)
	}
	if !workload.HasQuotaReservation(&wl) && !workload.IsFinished(&wl) && workload.IsActive(&wl) {
		return ctrl.Result{}, r.reportMissingQueue(ctx, &wl)
	}
	return ctrl.Result{}, nil
}

// reportMissingQueue sets QuotaReserved=False with the reason when the
// workload's LocalQueue or its ClusterQueue does not exist. The scheduler
// reports every other reason.
func (r *WorkloadReconciler) reportMissingQueue(ctx context.Context, wl *musterv1beta1.Workload) error {
	cq, ok := r.state.Queues.ClusterQueueOf(wl.Namespace, string(wl.Spec.QueueName))
	var reason, msg string
	switch {
	case !ok:
		reason, msg = musterv1beta1.ReasonLocalQueueNotFound, fmt.Sprintf("LocalQueue %s doesn't exist", wl.Spec.QueueName)
	case !r.state.Cache.HasClusterQueue(cq):
		reason, msg = musterv1beta1.ReasonClusterQueueNotFound, fmt.Sprintf("ClusterQueue %s doesn't exist", cq)
	default:
		return nil
	}
	return setPending(ctx, r.client, wl, reason, msg, r.clock.Now())
}

// setPending writes QuotaReserved=False with a reason, unless the workload
// already says exactly that: unchanged reasons cost no API write. A write
// onto a stale version is skipped: the newer version is reconciled anyway.
func setPending(ctx context.Context, c client.Client, wl *musterv1beta1.Workload, reason, msg string, now time.Time) error {
	_, err := WritePending(ctx, c, wl, reason, msg, now)
	return err
}

// WritePending is setPending reporting whether the workload now says it:
// false when the write was skipped on a stale or deleted workload.
func WritePending(ctx context.Context, c client.Client, wl *musterv1beta1.Workload, reason, msg string, now time.Time) (bool, error) {
	_, err := wlstatus.Patch(ctx, c, wl, func(wl *musterv1beta1.Workload) bool { return workload.SetPending(wl, reason, msg, now) })
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		log.FromContext(ctx).V(2).Info("Skipped pending reason on a stale workload", "workload", klog.KObj(wl))
		return false, nil
	}
	return err == nil, err
}

// SetupWithManager registers the reconciler.
func (r *WorkloadReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.Workload{}).
		// A namespace's labels decide which ClusterQueues its workloads may use.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.namespaceToWorkloads),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		WatchesRawSource(r.state.resyncSource("workload")).
		Named("workload").
		WithOptions(everyReplica(controller.Options{MaxConcurrentReconciles: 4})).
		Complete(r)
}

func (r *WorkloadReconciler) namespaceToWorkloads(ctx context.Context, o client.Object) []reconcile.Request {
	var wls musterv1beta1.WorkloadList
	if err := r.client.List(ctx, &wls, client.InNamespace(o.GetName())); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(wls.Items))
	for i := range wls.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&wls.Items[i])})
	}
	return reqs
}
