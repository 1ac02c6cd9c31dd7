package admissionchecks

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
	"github.com/musterhq/muster/controllers/metrics"
	"github.com/musterhq/muster/controllers/scheduling"
	"github.com/musterhq/muster/controllers/wlstatus"
	"github.com/musterhq/muster/internal/workload"
)

// +kubebuilder:rbac:groups=muster.dev,resources=workloads,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=clusterqueues,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// The backoff of a workload whose check asked for a retry without saying
// how long to wait: doubled on every retry, from retryBase up to retryMax
// (the requeuing backoff's defaults).
const (
	retryBase = 60 * time.Second
	retryMax  = time.Hour
)

// Lifecycle follows the workloads that wait for admission checks.
type Lifecycle struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
}

// Reconcile moves one workload on from its checks' answers.
func (r *Lifecycle) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl musterv1beta1.Workload
	if err := r.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !workload.HoldsQuota(&wl) || workload.IsEvicted(&wl) || len(wl.Status.AdmissionChecks) == 0 {
		return ctrl.Result{}, nil
	}
	synced, err := r.syncWithQueue(ctx, &wl)
	if synced || err != nil {
		return conflict.Requeue(ctx, ctrl.Result{}, err)
	}
	err = r.follow(ctx, &wl)
	return conflict.Requeue(ctx, ctrl.Result{}, err)
}

// syncWithQueue makes the workload's checks those its ClusterQueue has now
// for the flavors it reserved, as in Kueue: a check taken off the queue no
// longer holds it, a check added is asked too. It reports whether it
// wrote.
func (r *Lifecycle) syncWithQueue(ctx context.Context, wl *musterv1beta1.Workload) (bool, error) {
	var cq musterv1beta1.ClusterQueue
	if err := r.Client.Get(ctx, client.ObjectKey{Name: string(wl.Status.Admission.ClusterQueue)}, &cq); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	names := scheduling.ChecksFor(&cq.Spec, wl.Status.Admission)
	now := r.Clock.Now()
	return wlstatus.Patch(ctx, r.Client, wl, func(wl *musterv1beta1.Workload) bool {
		if !workload.SyncChecks(wl, names, now) {
			return false
		}
		// Without checks left, nothing else would admit it.
		workload.AdmitChecked(wl, now)
		return true
	})
}

// follow applies what the checks say: a rejection deactivates, a retry
// evicts with a backoff, all Ready admits.
func (r *Lifecycle) follow(ctx context.Context, wl *musterv1beta1.Workload) error {
	now := r.Clock.Now()
	logger := log.FromContext(ctx).WithValues("workload", klog.KObj(wl))
	if failed := workload.FailedCheck(wl); failed != nil {
		check := *failed
		if check.State == musterv1beta1.CheckStateRejected {
			return r.reject(ctx, wl, &check, now)
		}
		return r.retry(ctx, wl, &check, now)
	}
	wrote, err := wlstatus.Patch(ctx, r.Client, wl, func(wl *musterv1beta1.Workload) bool { return workload.AdmitChecked(wl, now) })
	if err != nil || !wrote {
		return err
	}
	metrics.ReportAdmittedAfterChecks(wl, now)
	r.Recorder.Eventf(wl, nil, corev1.EventTypeNormal, musterv1beta1.ReasonAdmitted, "Admit",
		"Admitted by ClusterQueue %s: every admission check is Ready", wl.Status.Admission.ClusterQueue)
	logger.Info("Admitted workload after its admission checks")
	return nil
}

// reject evicts the workload for good: its job reconciler sets
// spec.active=false before it releases the quota.
func (r *Lifecycle) reject(ctx context.Context, wl *musterv1beta1.Workload, check *musterv1beta1.AdmissionCheckState, now time.Time) error {
	msg := workload.RejectedMessage(check)
	wrote, err := wlstatus.Patch(ctx, r.Client, wl, func(wl *musterv1beta1.Workload) bool {
		return workload.Deactivate(wl, musterv1beta1.ReasonAdmissionCheckRejected, msg, now)
	})
	if err != nil || !wrote {
		return err
	}
	metrics.ReportEviction(wl, musterv1beta1.ReasonAdmissionCheckRejected, "", now)
	r.Recorder.Eventf(wl, nil, corev1.EventTypeWarning, musterv1beta1.ReasonAdmissionCheckRejected, "Deactivate", "%s", msg)
	log.FromContext(ctx).Info("Deactivated workload rejected by an admission check", "workload", klog.KObj(wl), "check", check.Name)
	return nil
}

// retry evicts the workload with a backoff: once its job is stopped its
// quota is released and its checks start again.
func (r *Lifecycle) retry(ctx context.Context, wl *musterv1beta1.Workload, check *musterv1beta1.AdmissionCheckState, now time.Time) error {
	backoff := RetryBackoff(check, workload.CheckRetries(check)+1)
	wrote, err := wlstatus.Patch(ctx, r.Client, wl, func(wl *musterv1beta1.Workload) bool {
		return workload.EvictForCheck(wl, string(check.Name), now.Add(backoff), now)
	})
	if err != nil || !wrote {
		return err
	}
	metrics.ReportEviction(wl, musterv1beta1.ReasonAdmissionCheck, "", now)
	r.Recorder.Eventf(wl, nil, corev1.EventTypeWarning, musterv1beta1.ReasonAdmissionCheck, "Evict",
		"Admission check %s asked for a retry (%s); queued again in %s", check.Name, check.Message, backoff)
	log.FromContext(ctx).Info("Evicted workload for an admission check retry", "workload", klog.KObj(wl), "check", check.Name, "backoff", backoff)
	return nil
}

// RetryBackoff is how long a workload waits before a check's count-th
// retry: the check's requeueAfterSeconds, else a doubling backoff.
func RetryBackoff(check *musterv1beta1.AdmissionCheckState, count int32) time.Duration {
	if s := check.RequeueAfterSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	d := retryBase
	for i := int32(1); i < count && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// SetupWithManager registers the controller: it follows the workloads that
// have admission checks, and records an event on every check transition.
func (r *Lifecycle) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &musterv1beta1.Workload{}, reservedInIndex, reservedIn); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.Workload{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(e event.CreateEvent) bool { return hasChecks(e.Object) },
			UpdateFunc: func(e event.UpdateEvent) bool {
				r.recordTransitions(e.ObjectOld.(*musterv1beta1.Workload), e.ObjectNew.(*musterv1beta1.Workload))
				return hasChecks(e.ObjectNew)
			},
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		// A check added to or taken off a queue changes what its reserved
		// workloads wait for.
		Watches(&musterv1beta1.ClusterQueue{}, handler.EnqueueRequestsFromMapFunc(r.waitingIn),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("admissionchecks").
		Complete(r)
}

// reservedInIndex indexes Workloads by the ClusterQueue they reserved quota
// in.
const reservedInIndex = "muster.dev/reserved-in"

func reservedIn(o client.Object) []string {
	if wl, ok := o.(*musterv1beta1.Workload); ok && wl.Status.Admission != nil {
		return []string{string(wl.Status.Admission.ClusterQueue)}
	}
	return nil
}

// waitingIn are a ClusterQueue's workloads that hold quota with checks.
func (r *Lifecycle) waitingIn(ctx context.Context, o client.Object) []reconcile.Request {
	var wls musterv1beta1.WorkloadList
	if err := r.Client.List(ctx, &wls, client.MatchingFields{reservedInIndex: o.GetName()}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range wls.Items {
		if wl := &wls.Items[i]; len(wl.Status.AdmissionChecks) > 0 && !workload.IsAdmitted(wl) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(wl)})
		}
	}
	return out
}

func hasChecks(o client.Object) bool {
	wl, ok := o.(*musterv1beta1.Workload)
	return ok && len(wl.Status.AdmissionChecks) > 0
}

// recordTransitions records an event on the workload for a check that
// turned Ready while another still holds it: where users look to see
// which checks passed. The last check's Ready is the admission's event,
// and a Retry or a rejection is the eviction's, each with the check's
// name and message, so none of those costs a second write.
func (r *Lifecycle) recordTransitions(old, cur *musterv1beta1.Workload) {
	if workload.ChecksReady(cur) {
		return
	}
	for _, c := range cur.Status.AdmissionChecks {
		prev := workload.FindCheck(old, string(c.Name))
		if prev == nil || prev.State == c.State || c.State != musterv1beta1.CheckStateReady {
			continue
		}
		r.Recorder.Eventf(cur, nil, corev1.EventTypeNormal, "AdmissionCheckReady", "Check",
			"%s", fmt.Sprintf("Admission check %s is Ready: %s", c.Name, c.Message))
	}
}
