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
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
	"github.com/musterhq/muster/controllers/metrics"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
)

// +kubebuilder:rbac:groups=muster.dev,resources=clusterqueues,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=clusterqueues/status,verbs=get;update;patch

// ClusterQueueReconciler feeds ClusterQueues to the core and writes their
// status: whether they are active, and their counts and usage.
type ClusterQueueReconciler struct {
	client client.Client
	state  *State
	// fairSharing reports each queue's DRF share in its status.
	fairSharing bool
	// generations remembers the spec each queue was last applied with, so
	// only a spec change gives parked workloads another chance.
	generations map[string]int64
	// budget spreads status writes over time when many queues change.
	budget *statusBudget
}

// Reconcile applies a ClusterQueue and refreshes its status.
func (r *ClusterQueueReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	return conflict.Requeue(ctx, res, err)
}

func (r *ClusterQueueReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.state.WaitSynced(ctx); err != nil {
		return ctrl.Result{}, err
	}
	var cq musterv1beta1.ClusterQueue
	if err := r.client.Get(ctx, req.NamespacedName, &cq); err != nil {
		if apierrors.IsNotFound(err) {
			r.state.Cache.DeleteClusterQueue(req.Name)
			r.state.Queues.DeleteClusterQueue(req.Name)
			delete(r.generations, req.Name)
			r.budget.forget(req.Name)
			metrics.ForgetClusterQueue(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if gen, ok := r.generations[cq.Name]; !ok || gen != cq.Generation || !cq.DeletionTimestamp.IsZero() {
		r.state.ApplyClusterQueue(&cq)
		r.generations[cq.Name] = cq.Generation
	}
	wait, err := r.updateStatus(ctx, &cq)
	if err != nil {
		return ctrl.Result{}, err
	}
	inUse := r.state.Cache.Reserving(cq.Name) > 0
	res, err := syncFinalizer(ctx, r.client, &cq, inUse)
	return requeueWithin(res, wait), err
}

// requeueWithin brings a result's requeue forward to wait, if sooner.
func requeueWithin(res ctrl.Result, wait time.Duration) ctrl.Result {
	if wait > 0 && (res.RequeueAfter == 0 || wait < res.RequeueAfter) {
		res.RequeueAfter = wait
	}
	return res
}

// finalizerRecheck is how often an object being deleted but still in use
// is looked at again, should the event of its last user's end be missed.
const finalizerRecheck = 10 * time.Second

// syncFinalizer adds the in-use finalizer to a live object and removes it
// from one being deleted once nothing uses it (the core was rebuilt before
// any reconcile, so "nothing" is known, not guessed).
func syncFinalizer(ctx context.Context, c client.Client, obj client.Object, inUse bool) (ctrl.Result, error) {
	switch {
	case obj.GetDeletionTimestamp().IsZero():
		if controllerutil.AddFinalizer(obj, InUseFinalizer) {
			return ctrl.Result{}, client.IgnoreNotFound(c.Update(ctx, obj))
		}
	case inUse:
		return ctrl.Result{RequeueAfter: finalizerRecheck}, nil
	default:
		if controllerutil.RemoveFinalizer(obj, InUseFinalizer) {
			log.FromContext(ctx).Info("Released finalizer of a deleted object nothing uses any more", "object", klog.KObj(obj))
			return ctrl.Result{}, client.IgnoreNotFound(c.Update(ctx, obj))
		}
	}
	return ctrl.Result{}, nil
}

// updateStatus writes the queue's status when it changed and the budget
// allows; otherwise it says how long to wait.
func (r *ClusterQueueReconciler) updateStatus(ctx context.Context, cq *musterv1beta1.ClusterQueue) (time.Duration, error) {
	st := r.state.Cache.ClusterQueueStatus(cq.Name)
	pending := r.state.Queues.PendingInClusterQueue(cq.Name)
	newStatus := cq.Status.DeepCopy()
	newStatus.PendingWorkloads = int32(pending)
	newStatus.ReservingWorkloads = int32(st.Reserving)
	newStatus.AdmittedWorkloads = int32(st.Reserving)
	newStatus.FlavorsReservation = toFlavorUsage(st.Usage, st.Borrowed)
	newStatus.FlavorsUsage = toFlavorUsage(st.Usage, st.Borrowed)
	newStatus.FairSharing = nil
	if r.fairSharing {
		newStatus.FairSharing = &musterv1beta1.FairSharingStatus{WeightedShare: st.WeightedShare}
		if d, ok := r.state.Cache.DecayedUsageOf(cq.Name, false); ok {
			newStatus.FairSharing.DecayedUsage, newStatus.FairSharing.LastSampled = decayedStatus(d)
		}
	}
	active := activeCondition(cq, st)
	meta.SetStatusCondition(&newStatus.Conditions, active)
	if r.state.Leading() { // one replica's series, not one per replica
		r.recordQueueMetrics(cq, st, active)
	}
	if equality.Semantic.DeepEqual(&cq.Status, newStatus) {
		return 0, nil
	}
	if wait := r.budget.turnFor(cq.Name, cq.Status.Conditions, newStatus.Conditions); wait > 0 {
		return wait, nil
	}
	orig := cq.DeepCopy()
	cq.Status = *newStatus
	err := r.client.Status().Patch(ctx, cq, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	return 0, client.IgnoreNotFound(err)
}

func activeCondition(cq *musterv1beta1.ClusterQueue, st quota.QueueStatus) metav1.Condition {
	c := metav1.Condition{Type: musterv1beta1.ClusterQueueActive, ObservedGeneration: cq.Generation}
	switch {
	case !cq.DeletionTimestamp.IsZero():
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, musterv1beta1.ReasonTerminating, "ClusterQueue is being deleted; it admits nothing new"
	case st.InactiveBecause == quota.FlavorsMissing:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, musterv1beta1.ReasonFlavorNotFound, st.Inactive
	case st.InactiveBecause == quota.TopologyMissing:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, musterv1beta1.ReasonTopologyNotFound, st.Inactive
	case st.InactiveBecause == quota.GangMissing:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, musterv1beta1.ReasonGangSchedulerNotFound, st.Inactive
	case st.InactiveBecause == quota.CheckMissing:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, musterv1beta1.ReasonAdmissionCheckNotFound, st.Inactive
	case st.InactiveBecause == quota.CheckInactive:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, musterv1beta1.ReasonAdmissionCheckInactive, st.Inactive
	case st.InactiveBecause == quota.CohortCycle:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, musterv1beta1.ReasonCohortCycle, "ClusterQueue is inactive: "+st.Inactive
	case st.InactiveBecause != quota.Active:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, musterv1beta1.ReasonStopped, st.Inactive
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, musterv1beta1.ReasonReady, "Can admit new workloads"
	}
	return c
}

// recordQueueMetrics sets the ClusterQueue's gauges (Kueue's names and
// labels): pending by status, active workloads, status, and per flavor and
// resource its quota, limits and usage.
func (r *ClusterQueueReconciler) recordQueueMetrics(cq *musterv1beta1.ClusterQueue, st quota.QueueStatus, active metav1.Condition) {
	name, cohort := cq.Name, string(cq.Spec.Cohort)
	queued, parked := r.state.Queues.PendingByStatus(name)
	metrics.PendingWorkloads.WithLabelValues(name, metrics.StatusActive).Set(float64(queued))
	metrics.PendingWorkloads.WithLabelValues(name, metrics.StatusInadmissible).Set(float64(parked))
	metrics.ReservingActiveWorkloads.WithLabelValues(name).Set(float64(st.Reserving))
	metrics.AdmittedActiveWorkloads.WithLabelValues(name).Set(float64(st.Reserving))
	oldest := 0.0
	if t := r.state.Queues.OldestPending(name); !t.IsZero() {
		oldest = float64(t.Unix())
	}
	metrics.OldestPendingWorkload.WithLabelValues(name).Set(oldest)
	metrics.SetOneOf(metrics.ClusterQueueStatus, prometheus.Labels{"cluster_queue": name}, "status", clusterQueueStatusOf(active), "pending", "active", "terminating")
	if r.fairSharing {
		metrics.ClusterQueueWeightedShare.WithLabelValues(name, cohort).Set(float64(st.WeightedShare))
		// The cohort's share moves with its queues' usage: refreshed with
		// them, not only when the Cohort object changes.
		if st.HasCohortShare {
			metrics.CohortWeightedShare.WithLabelValues(cohort).Set(float64(st.CohortShare))
		}
	}
	for _, g := range []*prometheus.GaugeVec{metrics.ClusterQueueResourceReservation, metrics.ClusterQueueResourceUsage,
		metrics.ClusterQueueNominalQuota, metrics.ClusterQueueBorrowingLimit, metrics.ClusterQueueLendingLimit} {
		g.DeletePartialMatch(prometheus.Labels{"cluster_queue": name})
	}
	for fr, v := range st.Usage {
		qty := core.Quantity(fr.Resource, v)
		q := qty.AsApproximateFloat64()
		metrics.ClusterQueueResourceReservation.WithLabelValues(cohort, name, fr.Flavor, fr.Resource).Set(q)
		metrics.ClusterQueueResourceUsage.WithLabelValues(cohort, name, fr.Flavor, fr.Resource).Set(q)
	}
	for _, rg := range cq.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			for _, rq := range fq.Resources {
				labels := []string{cohort, name, string(fq.Name), string(rq.Name)}
				metrics.ClusterQueueNominalQuota.WithLabelValues(labels...).Set(rq.NominalQuota.AsApproximateFloat64())
				if rq.BorrowingLimit != nil {
					metrics.ClusterQueueBorrowingLimit.WithLabelValues(labels...).Set(rq.BorrowingLimit.AsApproximateFloat64())
				}
				if rq.LendingLimit != nil {
					metrics.ClusterQueueLendingLimit.WithLabelValues(labels...).Set(rq.LendingLimit.AsApproximateFloat64())
				}
			}
		}
	}
}

// clusterQueueStatusOf is Kueue's cluster_queue_status: active, pending
// (inactive for a cause that may clear) or terminating.
func clusterQueueStatusOf(active metav1.Condition) string {
	switch {
	case active.Status == metav1.ConditionTrue:
		return "active"
	case active.Reason == musterv1beta1.ReasonTerminating:
		return "terminating"
	}
	return "pending"
}

// SetupWithManager registers the reconciler. Besides ClusterQueue spec
// changes it reacts, coalesced, to the workloads that change its counts, and
// to flavor changes signalled through the state.
func (r *ClusterQueueReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.generations = map[string]int64{}
	r.budget = newStatusBudget(clock.RealClock{})
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.ClusterQueue{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
			deletionPredicate()))).
		Watches(&musterv1beta1.Workload{}, coalescingAfter(func() time.Duration {
			cqs, _ := r.state.Queues.Counts()
			return queueStatusDelay(cqs)
		}, r.workloadToClusterQueue)).
		WatchesRawSource(source.Channel(r.state.clusterQueueEvents, &handler.EnqueueRequestForObject{})).
		WatchesRawSource(r.state.resyncSource("clusterqueue")).
		Named("clusterqueue").
		// One worker: the generations map is not shared between goroutines.
		WithOptions(everyReplica(controller.Options{MaxConcurrentReconciles: 1, RecoverPanic: ptr.To(true)})).
		Complete(r)
}

func (r *ClusterQueueReconciler) workloadToClusterQueue(o client.Object) []reconcile.Request {
	wl, ok := o.(*musterv1beta1.Workload)
	if !ok {
		return nil
	}
	if wl.Status.Admission != nil {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: string(wl.Status.Admission.ClusterQueue)}}}
	}
	if cq, ok := r.state.Queues.ClusterQueueOf(wl.Namespace, string(wl.Spec.QueueName)); ok {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: cq}}}
	}
	return nil
}

func deletionPredicate() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
}
