// Package webhooks validates the muster.dev API beyond what CEL can afford.
// The generic job webhook, which suspends jobs naming a queue, belongs to
// the job framework (controllers/jobframework), beside the reconciler.
package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// +kubebuilder:webhook:path=/validate-muster-dev-v1beta1-clusterqueue,mutating=false,failurePolicy=fail,sideEffects=None,groups=muster.dev,resources=clusterqueues,verbs=create;update,versions=v1beta1,name=vclusterqueue.muster.dev,admissionReviewVersions=v1

// ClusterQueueWebhook validates the quantities of a ClusterQueue.
type ClusterQueueWebhook struct{}

// SetupClusterQueueWebhook registers the webhook.
func SetupClusterQueueWebhook(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &musterv1beta1.ClusterQueue{}).WithValidator(&ClusterQueueWebhook{}).Complete()
}

func (w *ClusterQueueWebhook) ValidateCreate(_ context.Context, cq *musterv1beta1.ClusterQueue) (admission.Warnings, error) {
	return nil, invalid("ClusterQueue", cq.Name, validateResourceGroups(cq.Spec.ResourceGroups, field.NewPath("spec", "resourceGroups")))
}

func (w *ClusterQueueWebhook) ValidateUpdate(_ context.Context, _, cq *musterv1beta1.ClusterQueue) (admission.Warnings, error) {
	return nil, invalid("ClusterQueue", cq.Name, validateResourceGroups(cq.Spec.ResourceGroups, field.NewPath("spec", "resourceGroups")))
}

func (w *ClusterQueueWebhook) ValidateDelete(context.Context, *musterv1beta1.ClusterQueue) (admission.Warnings, error) {
	return nil, nil
}

// +kubebuilder:webhook:path=/validate-muster-dev-v1beta1-cohort,mutating=false,failurePolicy=fail,sideEffects=None,groups=muster.dev,resources=cohorts,verbs=create;update,versions=v1beta1,name=vcohort.muster.dev,admissionReviewVersions=v1

// CohortWebhook validates the quantities of a Cohort.
type CohortWebhook struct{}

// SetupCohortWebhook registers the webhook.
func SetupCohortWebhook(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &musterv1beta1.Cohort{}).WithValidator(&CohortWebhook{}).Complete()
}

func (w *CohortWebhook) ValidateCreate(_ context.Context, c *musterv1beta1.Cohort) (admission.Warnings, error) {
	return nil, invalid("Cohort", c.Name, validateResourceGroups(c.Spec.ResourceGroups, field.NewPath("spec", "resourceGroups")))
}

func (w *CohortWebhook) ValidateUpdate(_ context.Context, _, c *musterv1beta1.Cohort) (admission.Warnings, error) {
	return nil, invalid("Cohort", c.Name, validateResourceGroups(c.Spec.ResourceGroups, field.NewPath("spec", "resourceGroups")))
}

func (w *CohortWebhook) ValidateDelete(context.Context, *musterv1beta1.Cohort) (admission.Warnings, error) {
	return nil, nil
}

// validateResourceGroups checks what the CRD's CEL rules cannot afford:
// quantities are not negative and lendingLimit does not exceed nominalQuota.
func validateResourceGroups(groups []musterv1beta1.ResourceGroup, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, g := range groups {
		for j, f := range g.Flavors {
			for k, r := range f.Resources {
				p := path.Index(i).Child("flavors").Index(j).Child("resources").Index(k)
				if r.NominalQuota.Sign() < 0 {
					errs = append(errs, field.Invalid(p.Child("nominalQuota"), r.NominalQuota.String(), "nominalQuota must not be negative"))
				}
				if r.BorrowingLimit != nil && r.BorrowingLimit.Sign() < 0 {
					errs = append(errs, field.Invalid(p.Child("borrowingLimit"), r.BorrowingLimit.String(), "borrowingLimit must not be negative"))
				}
				if r.LendingLimit != nil && r.LendingLimit.Sign() < 0 {
					errs = append(errs, field.Invalid(p.Child("lendingLimit"), r.LendingLimit.String(), "lendingLimit must not be negative"))
				}
				if r.LendingLimit != nil && r.LendingLimit.Cmp(r.NominalQuota) > 0 {
					errs = append(errs, field.Invalid(p.Child("lendingLimit"), r.LendingLimit.String(), "lendingLimit must not exceed nominalQuota"))
				}
			}
		}
	}
	return errs
}

// invalid turns field errors into the Invalid status error users see, or
// nil when there are none.
func invalid(kind string, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(musterv1beta1.GroupVersion.WithKind(kind).GroupKind(), name, errs)
}
