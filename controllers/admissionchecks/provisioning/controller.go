// Package provisioning answers the AdmissionChecks of controllerName
// muster.dev/provisioning-request: for each workload that reserved quota,
// it asks the cluster autoscaler for the nodes of the whole job at once
// with one ProvisioningRequest (autoscaling.x-k8s.io/v1) and one
// PodTemplate per provisioned pod set, and says Ready once they are
// provisioned, with the annotations that let the job's pods consume them.
// A failed request is retried with a backoff and finally rejected, as its
// ProvisioningRequestConfig says.
package provisioning

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/wlstatus"
	"github.com/musterhq/muster/internal/workload"
)

// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=provisioningrequests,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=podtemplates,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=muster.dev,resources=workloads,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=resourceflavors,verbs=get;list;watch

// apiPollInterval is how often the controller looks for the
// ProvisioningRequest API while it is not served.
const apiPollInterval = 10 * time.Second

// staleWait is how soon a workload whose previous request is still being
// deleted is looked at again.
const staleWait = time.Second

// Controller answers the ProvisioningRequest checks.
type Controller struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
}

// SetupWithManager registers the AdmissionCheck reconciler at once, and
// the workload reconciler once the ProvisioningRequest API is served: a
// cluster without the autoscaler's CRD runs Muster as before, its
// provisioning checks not Active.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	served := func() bool {
		_, err := mgr.GetRESTMapper().RESTMapping(autoscaling.SchemeGroupVersion.WithKind("ProvisioningRequest").GroupKind(), autoscaling.SchemeGroupVersion.Version)
		return err == nil
	}
	if err := (&CheckReconciler{Client: c.Client, Served: served}).SetupWithManager(mgr); err != nil {
		return err
	}
	return mgr.Add(&apiWaiter{mgr: mgr, served: served, start: c.setupWorkloads})
}

func (c *Controller) setupWorkloads(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.Workload{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return len(o.(*musterv1beta1.Workload).Status.AdmissionChecks) > 0
		}))).
		Owns(&autoscaling.ProvisioningRequest{}).
		Named("provisioningrequest").
		Complete(c)
}

// Reconcile answers a workload's ProvisioningRequest checks.
func (c *Controller) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl musterv1beta1.Workload
	if err := c.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	checks, err := c.ownChecks(ctx, &wl)
	if err != nil || len(checks) == 0 {
		return ctrl.Result{}, err
	}
	if !workload.HoldsQuota(&wl) {
		// Requeued or finished: the next reservation asks again, anew.
		return ctrl.Result{}, c.deleteRequests(ctx, &wl, "", "")
	}
	if workload.IsEvicted(&wl) {
		return ctrl.Result{}, nil // its quota is released next
	}
	var res ctrl.Result
	answers := map[string]musterv1beta1.AdmissionCheckState{}
	for _, ac := range checks {
		st, wait, err := c.answer(ctx, &wl, ac)
		if err != nil {
			return conflict.Requeue(ctx, ctrl.Result{}, err)
		}
		if wait > 0 && (res.RequeueAfter == 0 || wait < res.RequeueAfter) {
			res.RequeueAfter = wait
		}
		if st != nil {
			answers[ac.Name] = *st
		}
	}
	now := c.Clock.Now()
	_, err = wlstatus.Patch(ctx, c.Client, &wl, func(wl *musterv1beta1.Workload) bool {
		changed := false
		for _, st := range answers {
			changed = workload.SetCheckState(wl, st, now) || changed
		}
		return changed
	})
	return conflict.Requeue(ctx, res, err)
}

// ownChecks are the workload's checks that this controller answers, in
// the workload's order.
func (c *Controller) ownChecks(ctx context.Context, wl *musterv1beta1.Workload) ([]*musterv1beta1.AdmissionCheck, error) {
	var out []*musterv1beta1.AdmissionCheck
	for _, st := range wl.Status.AdmissionChecks {
		ac := &musterv1beta1.AdmissionCheck{}
		err := c.Client.Get(ctx, types.NamespacedName{Name: string(st.Name)}, ac)
		if client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		if err == nil && ac.Spec.ControllerName == musterv1beta1.ProvisioningRequestControllerName {
			out = append(out, ac)
		}
	}
	return out, nil
}

// answer is the state of one check for a workload that holds quota: it
// creates the attempt's request when there is none, and reads the
// request's conditions otherwise. A nil state leaves the check as it is.
func (c *Controller) answer(ctx context.Context, wl *musterv1beta1.Workload, ac *musterv1beta1.AdmissionCheck) (*musterv1beta1.AdmissionCheckState, time.Duration, error) {
	check := ac.Name
	cur := workload.FindCheck(wl, check)
	if cur.State == musterv1beta1.CheckStateRetry || cur.State == musterv1beta1.CheckStateRejected {
		return nil, 0, nil // the lifecycle acts on it
	}
	pending := func(msg string) *musterv1beta1.AdmissionCheckState {
		return &musterv1beta1.AdmissionCheckState{Name: cur.Name, State: musterv1beta1.CheckStatePending, Message: msg}
	}
	cfg, err := c.configOf(ctx, ac)
	if err != nil || cfg == nil {
		return pending("Waiting for the check's ProvisioningRequestConfig"), 0, err
	}
	podSets := managedPodSets(wl, cfg)
	if len(podSets) == 0 {
		return &musterv1beta1.AdmissionCheckState{Name: cur.Name, State: musterv1beta1.CheckStateReady,
			Message: "No pod set requests a resource the autoscaler provides (" + managedList(cfg) + ")"}, 0, nil
	}
	attempt := workload.CheckRetries(cur) + 1
	name := requestName(wl.Name, check, attempt)
	if err := c.deleteRequests(ctx, wl, check, name); err != nil {
		return nil, 0, err
	}
	var pr autoscaling.ProvisioningRequest
	err = c.Client.Get(ctx, types.NamespacedName{Namespace: wl.Namespace, Name: name}, &pr)
	switch {
	case apierrors.IsNotFound(err):
		if cur.State == musterv1beta1.CheckStateReady {
			return nil, 0, nil // provisioned and gone (deleted by someone): the job has its nodes
		}
		if err := c.create(ctx, wl, check, name, podSets, cfg); err != nil {
			return nil, 0, err
		}
		return pending(fmt.Sprintf("Created ProvisioningRequest %s (attempt %d)", name, attempt)), 0, nil
	case err != nil:
		return nil, 0, err
	case !pr.DeletionTimestamp.IsZero() || pr.Annotations[ReservationAnnotation] != reservationOf(wl):
		// A request of an earlier reservation with this attempt's name
		// (the workload was preempted, not failed; or the cache is behind
		// the deletion that followed): it is replaced.
		if err := client.IgnoreNotFound(c.Client.Delete(ctx, &pr)); err != nil {
			return nil, 0, err
		}
		return pending(fmt.Sprintf("Replacing ProvisioningRequest %s of an earlier reservation", name)), staleWait, nil
	}
	a := answerOf(request{pr: &pr, cfg: cfg, podSet: podSets, attempt: attempt,
		admitted: workload.IsAdmitted(wl), podsReady: workload.IsPodsReady(wl)})
	st := &musterv1beta1.AdmissionCheckState{Name: cur.Name, State: a.state, Message: a.message, PodSetUpdates: a.updates}
	if a.state == musterv1beta1.CheckStateRetry {
		secs := int32(a.backoff / time.Second)
		st.RequeueAfterSeconds = &secs
	}
	return st, 0, nil
}

func managedList(cfg *musterv1beta1.ProvisioningRequestConfig) string {
	names := make([]string, 0, len(cfg.Spec.ManagedResources))
	for _, r := range cfg.Spec.ManagedResources {
		names = append(names, string(r))
	}
	return strings.Join(names, ", ")
}

// configOf is the ProvisioningRequestConfig a check names; nil when it
// names none that exists (the check is then not Active).
func (c *Controller) configOf(ctx context.Context, ac *musterv1beta1.AdmissionCheck) (*musterv1beta1.ProvisioningRequestConfig, error) {
	if ac.Spec.Parameters == nil {
		return nil, nil
	}
	var cfg musterv1beta1.ProvisioningRequestConfig
	if err := c.Client.Get(ctx, types.NamespacedName{Name: ac.Spec.Parameters.Name}, &cfg); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return &cfg, nil
}

// create makes the attempt's PodTemplates, then its ProvisioningRequest,
// all owned by the Workload. A request that exists already (made before a
// restart, or by the replica that led before) is kept.
func (c *Controller) create(ctx context.Context, wl *musterv1beta1.Workload, check, name string, podSets []string, cfg *musterv1beta1.ProvisioningRequestConfig) error {
	infos, err := jobframework.AdmittedPlacement(ctx, c.Client, wl)
	if err != nil {
		return err
	}
	templates, err := podTemplates(wl, check, name, podSets, infos)
	if err != nil {
		return err
	}
	for _, t := range templates {
		if err := c.createOwned(ctx, wl, t); err != nil {
			return err
		}
	}
	pr := provisioningRequest(wl, check, name, podSets, cfg)
	pr.Annotations = map[string]string{ReservationAnnotation: reservationOf(wl)}
	if err := c.createOwned(ctx, wl, pr); err != nil {
		return err
	}
	c.Recorder.Eventf(wl, nil, corev1.EventTypeNormal, "ProvisioningRequestCreated", "Provision",
		"Created ProvisioningRequest %s of class %s for admission check %s", name, cfg.Spec.ProvisioningClassName, check)
	log.FromContext(ctx).Info("Created ProvisioningRequest", "workload", klog.KObj(wl), "provisioningRequest", klog.KObj(pr), "check", check)
	return nil
}

func (c *Controller) createOwned(ctx context.Context, wl *musterv1beta1.Workload, obj client.Object) error {
	if err := controllerutil.SetControllerReference(wl, obj, c.Client.Scheme()); err != nil {
		return err
	}
	if err := c.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// deleteRequests deletes the workload's ProvisioningRequests and
// PodTemplates of a check (of every check when check is ""), but keep's.
func (c *Controller) deleteRequests(ctx context.Context, wl *musterv1beta1.Workload, check, keep string) error {
	sel := client.MatchingLabels{WorkloadLabel: labelValue(wl.Name)}
	if check != "" {
		sel[CheckLabel] = labelValue(check)
	}
	var prs autoscaling.ProvisioningRequestList
	if err := c.Client.List(ctx, &prs, client.InNamespace(wl.Namespace), sel); err != nil {
		return err
	}
	for i := range prs.Items {
		pr := &prs.Items[i]
		if pr.Name == keep || !metav1.IsControlledBy(pr, wl) || !pr.DeletionTimestamp.IsZero() {
			continue
		}
		if err := client.IgnoreNotFound(c.Client.Delete(ctx, pr)); err != nil {
			return err
		}
		log.FromContext(ctx).V(2).Info("Deleted ProvisioningRequest", "workload", klog.KObj(wl), "provisioningRequest", klog.KObj(pr))
	}
	var pts corev1.PodTemplateList
	if err := c.Client.List(ctx, &pts, client.InNamespace(wl.Namespace), sel); err != nil {
		return err
	}
	for i := range pts.Items {
		pt := &pts.Items[i]
		if (keep != "" && strings.HasPrefix(pt.Name, "ppt-"+keep+"-")) || !metav1.IsControlledBy(pt, wl) || !pt.DeletionTimestamp.IsZero() {
			continue
		}
		if err := client.IgnoreNotFound(c.Client.Delete(ctx, pt)); err != nil {
			return err
		}
	}
	return nil
}

// apiWaiter starts the workload reconciler once the ProvisioningRequest
// API is served.
type apiWaiter struct {
	mgr    ctrl.Manager
	served func() bool
	start  func(ctrl.Manager) error
}

var _ manager.LeaderElectionRunnable = (*apiWaiter)(nil)

// NeedLeaderElection is false: the waiter only adds the controller, which
// itself runs on the leader.
func (w *apiWaiter) NeedLeaderElection() bool { return false }

func (w *apiWaiter) Start(ctx context.Context) error {
	logger := ctrl.Log.WithName("provisioning")
	if !w.served() {
		logger.Info("The ProvisioningRequest API is not served; provisioning checks wait for it")
	}
	if err := wait.PollUntilContextCancel(ctx, apiPollInterval, true, func(context.Context) (bool, error) { return w.served(), nil }); err != nil {
		return nil // the manager is stopping
	}
	if err := w.start(w.mgr); err != nil {
		return fmt.Errorf("starting the ProvisioningRequest check: %w", err)
	}
	logger.Info("Answering ProvisioningRequest admission checks")
	return nil
}
