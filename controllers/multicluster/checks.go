package multicluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
// +kubebuilder:rbac:groups=muster.dev,resources=multiclusterconfigs,verbs=get;list;watch

// The Active reasons of a multi-cluster AdmissionCheck (Kueue's).
const (
	ReasonCheckActive        = "Active"
	ReasonBadConfig          = "BadConfig"
	ReasonSomeActiveClusters = "SomeActiveClusters"
	ReasonNoUsableClusters   = "NoUsableClusters"
)

// configOf is the MultiClusterConfig a multi-cluster check names.
func configOf(ctx context.Context, c client.Reader, ac *musterv1beta1.AdmissionCheck) (*musterv1beta1.MultiClusterConfig, error) {
	p := ac.Spec.Parameters
	if p == nil || p.APIGroup != musterv1beta1.GroupVersion.Group || p.Kind != "MultiClusterConfig" {
		return nil, fmt.Errorf("spec.parameters must name a MultiClusterConfig (apiGroup muster.dev, kind MultiClusterConfig)")
	}
	var cfg musterv1beta1.MultiClusterConfig
	if err := c.Get(ctx, types.NamespacedName{Name: p.Name}, &cfg); err != nil {
		return nil, fmt.Errorf("MultiClusterConfig %s: %w", p.Name, err)
	}
	return &cfg, nil
}

// CheckReconciler keeps the Active condition of the multi-cluster
// AdmissionChecks: Active while at least one of their worker clusters is.
type CheckReconciler struct {
	Client client.Client
}

// Reconcile sets one AdmissionCheck's Active condition.
func (r *CheckReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ac musterv1beta1.AdmissionCheck
	if err := r.Client.Get(ctx, req.NamespacedName, &ac); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ac.Spec.ControllerName != musterv1beta1.MultiClusterControllerName {
		return ctrl.Result{}, nil
	}
	cond, err := r.activeCondition(ctx, &ac)
	if err != nil {
		return ctrl.Result{}, err
	}
	orig := ac.DeepCopy()
	if !meta.SetStatusCondition(&ac.Status.Conditions, cond) {
		return ctrl.Result{}, nil
	}
	err = r.Client.Status().Patch(ctx, &ac, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	return conflict.Requeue(ctx, ctrl.Result{}, err)
}

func (r *CheckReconciler) activeCondition(ctx context.Context, ac *musterv1beta1.AdmissionCheck) (metav1.Condition, error) {
	c := metav1.Condition{Type: musterv1beta1.AdmissionCheckActive, Status: metav1.ConditionFalse, ObservedGeneration: ac.Generation}
	cfg, err := configOf(ctx, r.Client, ac)
	if err != nil {
		c.Reason, c.Message = ReasonBadConfig, "Cannot load the check's parameters: "+err.Error()
		return c, nil
	}
	var missing, inactive []string
	for _, name := range cfg.Spec.Clusters {
		var mc musterv1beta1.MultiCluster
		err := r.Client.Get(ctx, types.NamespacedName{Name: name}, &mc)
		switch {
		case client.IgnoreNotFound(err) != nil:
			return c, err
		case err != nil:
			missing = append(missing, name)
		case !meta.IsStatusConditionTrue(mc.Status.Conditions, musterv1beta1.MultiClusterActive):
			inactive = append(inactive, name)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("Missing clusters: %v", missing))
	}
	if len(inactive) > 0 {
		parts = append(parts, fmt.Sprintf("Inactive clusters: %v", inactive))
	}
	switch {
	case len(parts) == 0:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonCheckActive, "The admission check is active"
	case len(missing)+len(inactive) < len(cfg.Spec.Clusters):
		// Kueue's: a check with some clusters left still dispatches.
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonSomeActiveClusters, strings.Join(parts, ", ")
	default:
		c.Reason, c.Message = ReasonNoUsableClusters, strings.Join(parts, ", ")
	}
	return c, nil
}

// SetupWithManager registers the reconciler: it follows the
// AdmissionChecks, their configs and the clusters those name.
func (r *CheckReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.AdmissionCheck{}).
		Watches(&musterv1beta1.MultiClusterConfig{}, handler.EnqueueRequestsFromMapFunc(r.checksUsingConfig)).
		Watches(&musterv1beta1.MultiCluster{}, handler.EnqueueRequestsFromMapFunc(r.checksUsingCluster)).
		Named("multicluster-admissioncheck").
		Complete(r)
}

// checksUsing are the multi-cluster AdmissionChecks whose config matches.
func (r *CheckReconciler) checksUsing(ctx context.Context, match func(*musterv1beta1.MultiClusterConfig) bool) []reconcile.Request {
	var acs musterv1beta1.AdmissionCheckList
	if err := r.Client.List(ctx, &acs); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range acs.Items {
		ac := &acs.Items[i]
		if ac.Spec.ControllerName != musterv1beta1.MultiClusterControllerName {
			continue
		}
		if cfg, err := configOf(ctx, r.Client, ac); err != nil || match(cfg) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: ac.Name}})
		}
	}
	return out
}

func (r *CheckReconciler) checksUsingConfig(ctx context.Context, o client.Object) []reconcile.Request {
	return r.checksUsing(ctx, func(cfg *musterv1beta1.MultiClusterConfig) bool { return cfg.Name == o.GetName() })
}

func (r *CheckReconciler) checksUsingCluster(ctx context.Context, o client.Object) []reconcile.Request {
	return r.checksUsing(ctx, func(cfg *musterv1beta1.MultiClusterConfig) bool {
		return slices.Contains(cfg.Spec.Clusters, o.GetName())
	})
}
