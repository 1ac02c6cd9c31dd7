package webhooks

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// +kubebuilder:webhook:path=/validate-muster-dev-v1beta1-resourceflavor,mutating=false,failurePolicy=fail,sideEffects=None,groups=muster.dev,resources=resourceflavors,verbs=update,versions=v1beta1,name=vresourceflavor.muster.dev,admissionReviewVersions=v1

// ResourceFlavorWebhook keeps the placement of admitted workloads true: a
// flavor in use (its in-use finalizer is set while workloads admitted on
// it hold quota) cannot change its topology, or, when it has one, the node
// labels and tolerations that decide its nodes. Placements already written
// are named by them. An unused flavor may change freely, unlike Kueue's,
// which freezes them as soon as topologyName is set. Node fit cannot be
// turned on or off either (to or from None): the admitted workloads'
// placements are counted on the nodes because of it. Check and Pin differ
// only in how later pods are sent, so either may become the other.
type ResourceFlavorWebhook struct{}

// SetupResourceFlavorWebhook registers the webhook.
func SetupResourceFlavorWebhook(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &musterv1beta1.ResourceFlavor{}).WithValidator(&ResourceFlavorWebhook{}).Complete()
}

func (w *ResourceFlavorWebhook) ValidateCreate(context.Context, *musterv1beta1.ResourceFlavor) (admission.Warnings, error) {
	return nil, nil
}

func (w *ResourceFlavorWebhook) ValidateUpdate(_ context.Context, old, rf *musterv1beta1.ResourceFlavor) (admission.Warnings, error) {
	return nil, invalid("ResourceFlavor", rf.Name, validateFlavorInUse(old, rf))
}

func (w *ResourceFlavorWebhook) ValidateDelete(context.Context, *musterv1beta1.ResourceFlavor) (admission.Warnings, error) {
	return nil, nil
}

// validateFlavorInUse refuses changing what placements depend on while
// the flavor is in use.
func validateFlavorInUse(old, rf *musterv1beta1.ResourceFlavor) field.ErrorList {
	if !controllerutil.ContainsFinalizer(old, musterv1beta1.ResourceInUseFinalizer) {
		return nil
	}
	spec := field.NewPath("spec")
	const why = "cannot change while workloads admitted on the flavor hold quota"
	var errs field.ErrorList
	if old.Spec.TopologyName != rf.Spec.TopologyName {
		errs = append(errs, field.Forbidden(spec.Child("topologyName"), why))
	}
	if (old.Spec.EffectiveNodeFit() == musterv1beta1.NodeFitNone) != (rf.Spec.EffectiveNodeFit() == musterv1beta1.NodeFitNone) {
		errs = append(errs, field.Forbidden(spec.Child("nodeFit"), why+" (to or from None)"))
	}
	if old.Spec.TopologyName == "" {
		return errs
	}
	if !equality.Semantic.DeepEqual(old.Spec.NodeLabels, rf.Spec.NodeLabels) {
		errs = append(errs, field.Forbidden(spec.Child("nodeLabels"), why+" in its topology"))
	}
	if !equality.Semantic.DeepEqual(old.Spec.Tolerations, rf.Spec.Tolerations) {
		errs = append(errs, field.Forbidden(spec.Child("tolerations"), why+" in its topology"))
	}
	return errs
}
