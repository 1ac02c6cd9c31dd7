package provisioning

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
)

// +kubebuilder:rbac:groups=muster.dev,resources=admissionchecks,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=admissionchecks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=provisioningrequestconfigs,verbs=get;list;watch

// Active reasons of the check.
const (
	ReasonActive          = "Active"
	ReasonBadParameters   = "BadParametersRef"
	ReasonConfigNotFound  = "ProvisioningRequestConfigNotFound"
	ReasonAPINotInstalled = "ProvisioningRequestNotServed"
)

// CheckReconciler keeps the Active condition of the AdmissionChecks this
// controller answers: Active once the ProvisioningRequest API is served
// and the ProvisioningRequestConfig they name exists.
type CheckReconciler struct {
	Client client.Client
	// Served reports whether the API server serves ProvisioningRequests.
	Served func() bool
}

// Reconcile sets one AdmissionCheck's Active condition.
func (r *CheckReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ac musterv1beta1.AdmissionCheck
	if err := r.Client.Get(ctx, req.NamespacedName, &ac); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ac.Spec.ControllerName != musterv1beta1.ProvisioningRequestControllerName {
		return ctrl.Result{}, nil
	}
	cond, err := r.activeCondition(ctx, &ac)
	if err != nil {
		return ctrl.Result{}, err
	}
	orig := ac.DeepCopy()
	if !meta.SetStatusCondition(&ac.Status.Conditions, cond) {
		return r.recheck(cond), nil
	}
	err = r.Client.Status().Patch(ctx, &ac, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	res, err := conflict.Requeue(ctx, ctrl.Result{}, err)
	if err == nil && res.IsZero() {
		res = r.recheck(cond)
	}
	return res, err
}

// recheck looks again, while the API is not served, for a CRD installed
// later.
func (r *CheckReconciler) recheck(cond metav1.Condition) ctrl.Result {
	if cond.Reason == ReasonAPINotInstalled {
		return ctrl.Result{RequeueAfter: apiPollInterval}
	}
	return ctrl.Result{}
}

func (r *CheckReconciler) activeCondition(ctx context.Context, ac *musterv1beta1.AdmissionCheck) (metav1.Condition, error) {
	c := metav1.Condition{Type: musterv1beta1.AdmissionCheckActive, Status: metav1.ConditionFalse, ObservedGeneration: ac.Generation}
	p := ac.Spec.Parameters
	switch {
	case !r.Served():
		c.Reason, c.Message = ReasonAPINotInstalled, "The API server does not serve autoscaling.x-k8s.io/v1 ProvisioningRequests: install the cluster autoscaler's ProvisioningRequest CRD"
		return c, nil
	case p == nil || p.APIGroup != musterv1beta1.GroupVersion.Group || p.Kind != "ProvisioningRequestConfig":
		c.Reason, c.Message = ReasonBadParameters, "spec.parameters must name a ProvisioningRequestConfig (apiGroup muster.dev, kind ProvisioningRequestConfig)"
		return c, nil
	}
	var cfg musterv1beta1.ProvisioningRequestConfig
	err := r.Client.Get(ctx, types.NamespacedName{Name: p.Name}, &cfg)
	if client.IgnoreNotFound(err) != nil {
		return c, err
	}
	if err != nil {
		c.Reason, c.Message = ReasonConfigNotFound, fmt.Sprintf("ProvisioningRequestConfig %s not found", p.Name)
		return c, nil
	}
	c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonActive, "The check is answered with ProvisioningRequests of class "+cfg.Spec.ProvisioningClassName
	return c, nil
}

// SetupWithManager registers the reconciler: it follows the
// AdmissionChecks and the configs they name.
func (r *CheckReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.AdmissionCheck{}).
		Watches(&musterv1beta1.ProvisioningRequestConfig{}, handler.EnqueueRequestsFromMapFunc(r.checksUsing)).
		Named("provisioning-admissioncheck").
		Complete(r)
}

// checksUsing are the AdmissionChecks that name a config.
func (r *CheckReconciler) checksUsing(ctx context.Context, o client.Object) []reconcile.Request {
	var acs musterv1beta1.AdmissionCheckList
	if err := r.Client.List(ctx, &acs); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, ac := range acs.Items {
		if p := ac.Spec.Parameters; p != nil && p.Kind == "ProvisioningRequestConfig" && p.Name == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: ac.Name}})
		}
	}
	return out
}
