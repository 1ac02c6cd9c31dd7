package scheduling

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
	"github.com/musterhq/muster/controllers/metrics"
	"github.com/musterhq/muster/internal/core/quota"
)

// +kubebuilder:rbac:groups=muster.dev,resources=localqueues,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=localqueues/status,verbs=get;update;patch

// LocalQueueReconciler feeds LocalQueues to the core and writes their status.
type LocalQueueReconciler struct {
	client client.Client
	state  *State
	// budget spreads status writes over time when many queues change.
	budget *statusBudget
}

// Reconcile applies a LocalQueue and refreshes its status.
func (r *LocalQueueReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	return conflict.Requeue(ctx, res, err)
}

func (r *LocalQueueReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.state.WaitSynced(ctx); err != nil {
		return ctrl.Result{}, err
	}
	var lq musterv1beta1.LocalQueue
	if err := r.client.Get(ctx, req.NamespacedName, &lq); err != nil {
		if apierrors.IsNotFound(err) {
			r.state.forgetLocalQueue(req.Namespace, req.Name)
			r.budget.forget(req.String())
			metrics.ForgetLocalQueue(req.Namespace, req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	r.state.ApplyLocalQueue(&lq)
	wait, err := r.updateStatus(ctx, &lq)
	return ctrl.Result{RequeueAfter: wait}, err
}

// updateStatus writes the queue's status when it changed and the budget
// allows; otherwise it says how long to wait.
func (r *LocalQueueReconciler) updateStatus(ctx context.Context, lq *musterv1beta1.LocalQueue) (time.Duration, error) {
	key := lq.Namespace + "/" + lq.Name
	cq := string(lq.Spec.ClusterQueue)
	st := r.state.Cache.ClusterQueueStatus(cq)
	usage := &quota.LocalQueueUsage{}
	if u, ok := st.ByLocalQueue[key]; ok {
		usage = u
	}
	newStatus := lq.Status.DeepCopy()
	newStatus.PendingWorkloads = int32(r.state.Queues.PendingInLocalQueue(lq.Namespace, lq.Name))
	newStatus.ReservingWorkloads = int32(usage.Reserving)
	newStatus.AdmittedWorkloads = int32(usage.Reserving)
	newStatus.FlavorsReservation = toFlavorUsage(usage.Usage, nil)
	newStatus.FlavorsUsage = toFlavorUsage(usage.Usage, nil)
	newStatus.FairSharing = r.state.localQueueFairSharing(key, cq)
	cond := metav1.Condition{Type: musterv1beta1.LocalQueueActive, ObservedGeneration: lq.Generation,
		Status: metav1.ConditionTrue, Reason: musterv1beta1.ReasonReady, Message: "Can submit new workloads to ClusterQueue " + cq}
	switch {
	case !st.Exists:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, musterv1beta1.ReasonClusterQueueNotFound, "ClusterQueue "+cq+" doesn't exist"
	case st.Inactive != "":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, musterv1beta1.ReasonClusterQueueInactive, "ClusterQueue "+cq+" is inactive: "+st.Inactive
	}
	meta.SetStatusCondition(&newStatus.Conditions, cond)
	if r.state.Leading() { // one replica's series, not one per replica
		r.recordMetrics(lq, usage, cond)
	}
	if equality.Semantic.DeepEqual(&lq.Status, newStatus) {
		return 0, nil
	}
	if wait := r.budget.turnFor(key, lq.Status.Conditions, newStatus.Conditions); wait > 0 {
		return wait, nil
	}
	orig := lq.DeepCopy()
	lq.Status = *newStatus
	return 0, client.IgnoreNotFound(r.client.Status().Patch(ctx, lq, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})))
}

// recordMetrics sets the LocalQueue's gauges (Kueue's local_queue_*).
func (r *LocalQueueReconciler) recordMetrics(lq *musterv1beta1.LocalQueue, usage *quota.LocalQueueUsage, active metav1.Condition) {
	queued, parked := r.state.Queues.LocalQueuePendingByStatus(lq.Namespace, lq.Name)
	metrics.LocalQueuePendingWorkloads.WithLabelValues(lq.Name, lq.Namespace, metrics.StatusActive).Set(float64(queued))
	metrics.LocalQueuePendingWorkloads.WithLabelValues(lq.Name, lq.Namespace, metrics.StatusInadmissible).Set(float64(parked))
	metrics.LocalQueueReservingActiveWorkloads.WithLabelValues(lq.Name, lq.Namespace).Set(float64(usage.Reserving))
	metrics.LocalQueueAdmittedActiveWorkloads.WithLabelValues(lq.Name, lq.Namespace).Set(float64(usage.Reserving))
	metrics.SetOneOf(metrics.LocalQueueStatus, prometheus.Labels{"name": lq.Name, "namespace": lq.Namespace}, "active",
		string(active.Status), "True", "False", "Unknown")
}

// SetupWithManager registers the reconciler; workload changes and
// ClusterQueue changes refresh the status, coalesced.
func (r *LocalQueueReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.budget = newStatusBudget(clock.RealClock{})
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &musterv1beta1.LocalQueue{}, localQueueClusterQueueIndex,
		func(o client.Object) []string {
			return []string{string(o.(*musterv1beta1.LocalQueue).Spec.ClusterQueue)}
		}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.LocalQueue{}).
		Watches(&musterv1beta1.Workload{}, coalescingAfter(func() time.Duration {
			_, lqs := r.state.Queues.Counts()
			return queueStatusDelay(lqs)
		}, func(o client.Object) []reconcile.Request {
			wl := o.(*musterv1beta1.Workload)
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: wl.Namespace, Name: string(wl.Spec.QueueName)}}}
		})).
		Watches(&musterv1beta1.ClusterQueue{}, coalescing(r.clusterQueueToLocalQueues(mgr.GetClient()))).
		WatchesRawSource(r.state.resyncSource("localqueue")).
		Named("localqueue").
		WithOptions(everyReplica(controller.Options{})).
		Complete(r)
}

// localQueueClusterQueueIndex indexes LocalQueues by their ClusterQueue: a
// ClusterQueue's status change lists its own LocalQueues, not every one.
const localQueueClusterQueueIndex = "spec.clusterQueue"

func (r *LocalQueueReconciler) clusterQueueToLocalQueues(c client.Client) func(client.Object) []reconcile.Request {
	return func(o client.Object) []reconcile.Request {
		var lqs musterv1beta1.LocalQueueList
		if err := c.List(context.Background(), &lqs, client.MatchingFields{localQueueClusterQueueIndex: o.GetName()}); err != nil {
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(lqs.Items))
		for _, lq := range lqs.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&lq)})
		}
		return reqs
	}
}
