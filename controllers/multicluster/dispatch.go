package multicluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/wlstatus"
	"github.com/musterhq/muster/internal/workload"
)

// +kubebuilder:rbac:groups=muster.dev,resources=workloads,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=workloads/status,verbs=get;update;patch

// concurrentDispatches is how many workloads are stepped at once.
const concurrentDispatches = 8

// ReasonMultiCluster is the reason of the dispatcher's events (Kueue's is
// MultiKueue).
const ReasonMultiCluster = "MultiCluster"

// The incremental dispatcher's step: it nominates this many more worker
// clusters each round, a round lasting roundTimeout (Kueue's 3 and 5m).
const (
	incrementalStep = 3
	roundTimeout    = 5 * time.Minute
)

// Dispatcher answers the multi-cluster checks: it sends copies of a
// workload that reserved quota to the worker clusters, lets the first
// worker whose Muster admits it run its job, mirrors the job's status back
// and finishes the workload when the worker's does; it dispatches the
// workload again when that worker evicts it or is lost.
type Dispatcher struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	Pool     *Pool
	// Kinds are the job kinds that can be dispatched.
	Kinds []jobframework.MultiClusterKind
	// WorkerLostTimeout is how long a worker may not answer before its
	// workloads are dispatched again.
	WorkerLostTimeout time.Duration
	// Incremental nominates a few clusters at a time instead of all.
	Incremental bool
}

// dispatch is one workload being dispatched: its check, the check's
// config, and its job.
type dispatch struct {
	wl    *musterv1beta1.Workload
	check string
	cfg   *musterv1beta1.MultiClusterConfig
	kind  *jobframework.MultiClusterKind
	job   *unstructured.Unstructured
}

// Reconcile takes one workload one step through its dispatch.
func (d *Dispatcher) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl musterv1beta1.Workload
	if err := d.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, d.removeEverywhere(ctx, req.NamespacedName, nil)
	}
	check, cfg, err := d.ownCheck(ctx, &wl)
	if err != nil || check == "" {
		return ctrl.Result{}, err
	}
	dp := &dispatch{wl: &wl, check: check, cfg: cfg}
	res, err := d.step(ctx, dp)
	return conflict.Requeue(ctx, res, err)
}

func (d *Dispatcher) step(ctx context.Context, dp *dispatch) (ctrl.Result, error) {
	wl := dp.wl
	if err := d.loadJob(ctx, dp); err != nil {
		return ctrl.Result{}, err
	}
	if !workload.HoldsQuota(wl) || workload.IsEvicted(wl) || !wl.DeletionTimestamp.IsZero() {
		return d.withdraw(ctx, dp)
	}
	if msg := d.refusal(dp); msg != "" {
		return ctrl.Result{}, d.setCheck(ctx, dp, musterv1beta1.CheckStateRejected, msg)
	}
	if !othersReady(wl, dp.check) {
		// As in Kueue: the workload goes to a worker only once the
		// manager's own checks passed.
		return ctrl.Result{}, nil
	}
	if wl.Status.ClusterName == "" {
		return d.nominate(ctx, dp)
	}
	return d.follow(ctx, dp)
}

// ownCheck is the workload's multi-cluster check and its config; "" if it
// has none. A check whose config cannot be read is inactive, and its
// queue admits nothing: nothing to do here.
func (d *Dispatcher) ownCheck(ctx context.Context, wl *musterv1beta1.Workload) (string, *musterv1beta1.MultiClusterConfig, error) {
	for _, st := range wl.Status.AdmissionChecks {
		var ac musterv1beta1.AdmissionCheck
		err := d.Client.Get(ctx, types.NamespacedName{Name: string(st.Name)}, &ac)
		if client.IgnoreNotFound(err) != nil {
			return "", nil, err
		}
		if err != nil || ac.Spec.ControllerName != musterv1beta1.MultiClusterControllerName {
			continue
		}
		cfg, err := configOf(ctx, d.Client, &ac)
		if err != nil {
			log.FromContext(ctx).V(2).Info("Multi-cluster check without a usable config", "check", ac.Name, "err", err.Error())
			return "", nil, nil
		}
		return string(st.Name), cfg, nil
	}
	return "", nil, nil
}

// loadJob finds the workload's job and its kind; dp.job stays nil for a
// workload whose owner is not a kind that can be dispatched, or is gone.
func (d *Dispatcher) loadJob(ctx context.Context, dp *dispatch) error {
	owner := metav1.GetControllerOf(dp.wl)
	if owner == nil {
		return nil
	}
	for i := range d.Kinds {
		k := &d.Kinds[i]
		if k.GVK.GroupVersion().String() != owner.APIVersion || k.GVK.Kind != owner.Kind {
			continue
		}
		dp.kind = k
		job, err := d.getJob(ctx, k.GVK, types.NamespacedName{Namespace: dp.wl.Namespace, Name: owner.Name})
		if err != nil || job == nil {
			return err
		}
		if job.GetUID() == owner.UID {
			dp.job = job
		}
		return nil
	}
	return nil
}

// getJob reads a manager's job, from the cache when the kind has Go types
// (the job reconciler watches it already), else directly; nil if it is
// gone.
func (d *Dispatcher) getJob(ctx context.Context, gvk schema.GroupVersionKind, key types.NamespacedName) (*unstructured.Unstructured, error) {
	if typed, err := d.Client.Scheme().New(gvk); err == nil {
		obj := typed.(client.Object)
		if err := d.Client.Get(ctx, key, obj); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		job := &unstructured.Unstructured{Object: u}
		job.SetGroupVersionKind(gvk)
		return job, nil
	}
	job := &unstructured.Unstructured{}
	job.SetGroupVersionKind(gvk)
	if err := d.Client.Get(ctx, key, job); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return job, nil
}

// refusal says why the workload cannot be dispatched, "" if it can.
func (d *Dispatcher) refusal(dp *dispatch) string {
	owner := metav1.GetControllerOf(dp.wl)
	switch {
	case owner == nil:
		return "No multi-cluster adapter for a workload without a job"
	case dp.kind == nil:
		return fmt.Sprintf("No multi-cluster adapter found for owner kind %q", owner.APIVersion+", Kind="+owner.Kind)
	case dp.job == nil:
		return "" // going: withdrawn once its workload is
	case !dp.kind.Dispatched(dp.job):
		return fmt.Sprintf("The job is not managed by Muster's multi-cluster dispatch: expecting %s to be %q not %q",
			strings.Join(dp.kind.ManagedByPath, "."), dp.kind.ManagedBy, dp.kind.ManagedByOf(dp.job))
	}
	return ""
}

// othersReady reports whether every other check of the workload is Ready.
func othersReady(wl *musterv1beta1.Workload, check string) bool {
	for _, c := range wl.Status.AdmissionChecks {
		if string(c.Name) != check && c.State != musterv1beta1.CheckStateReady {
			return false
		}
	}
	return true
}

// setCheck writes the workload's state for the check. A Retry is at once:
// the workload's worker is lost, or its copy or job there is gone, and
// nothing is wrong with the job itself.
func (d *Dispatcher) setCheck(ctx context.Context, dp *dispatch, state musterv1beta1.CheckState, msg string) error {
	var after *int32
	if state == musterv1beta1.CheckStateRetry {
		after = ptr.To[int32](0)
	}
	return d.writeCheck(ctx, dp, state, msg, after)
}

// retryLater asks for a retry after the lifecycle's backoff.
func (d *Dispatcher) retryLater(ctx context.Context, dp *dispatch, msg string) error {
	return d.writeCheck(ctx, dp, musterv1beta1.CheckStateRetry, msg, nil)
}

func (d *Dispatcher) writeCheck(ctx context.Context, dp *dispatch, state musterv1beta1.CheckState, msg string, requeueAfter *int32) error {
	st := musterv1beta1.AdmissionCheckState{Name: musterv1beta1.AdmissionCheckReference(dp.check), State: state, Message: msg, RequeueAfterSeconds: requeueAfter}
	now := d.Clock.Now()
	wrote, err := wlstatus.Patch(ctx, d.Client, dp.wl, func(wl *musterv1beta1.Workload) bool {
		return workload.SetCheckState(wl, st, now)
	})
	if wrote && err == nil && state != musterv1beta1.CheckStatePending {
		d.Recorder.Eventf(dp.wl, nil, eventType(state), ReasonMultiCluster, string(state), msg)
		log.FromContext(ctx).Info("Multi-cluster check", "workload", klog.KObj(dp.wl), "state", state, "message", msg)
	}
	return err
}

func eventType(state musterv1beta1.CheckState) string {
	if state == musterv1beta1.CheckStateReady {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}

// SetupWithManager registers the dispatcher: it follows the workloads
// that have checks, their copies in the workers and the workers' state.
func (d *Dispatcher) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.Workload{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return len(o.(*musterv1beta1.Workload).Status.AdmissionChecks) > 0
		}))).
		WatchesRawSource(source.Channel(d.Pool.workloadEvents, &handler.EnqueueRequestForObject{})).
		Watches(&musterv1beta1.MultiCluster{}, handler.EnqueueRequestsFromMapFunc(d.workloadsOf),
			builder.WithPredicates(activeChanged)).
		// A step waits on the workers' API servers (and a lost one's
		// timeout): workloads are stepped side by side.
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrentDispatches}).
		Named("multicluster-dispatch").
		Complete(d)
}

// activeChanged passes a MultiCluster's events only when whether it is
// Active changes: a message that changes (another connection error) moves
// nothing.
var activeChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*musterv1beta1.MultiCluster), e.ObjectNew.(*musterv1beta1.MultiCluster)
		return meta.IsStatusConditionTrue(o.Status.Conditions, musterv1beta1.MultiClusterActive) !=
			meta.IsStatusConditionTrue(n.Status.Conditions, musterv1beta1.MultiClusterActive)
	},
}

// workloadsOf are the workloads a worker's state change may move: every
// one that holds quota with checks. Those dispatched to it wait for it or
// move; those waiting for a worker may go there; and one that answers
// again may still hold copies of workloads that moved on meanwhile, which
// nothing else brings back.
func (d *Dispatcher) workloadsOf(ctx context.Context, _ client.Object) []reconcile.Request {
	var wls musterv1beta1.WorkloadList
	if err := d.Client.List(ctx, &wls); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range wls.Items {
		if wl := &wls.Items[i]; workload.HoldsQuota(wl) && len(wl.Status.AdmissionChecks) > 0 {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(wl)})
		}
	}
	return out
}

// admittedAt is when a copy was admitted in its worker.
func admittedAt(wl *musterv1beta1.Workload) time.Time {
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadAdmitted); c != nil {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}
