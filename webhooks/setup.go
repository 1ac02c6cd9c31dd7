package webhooks

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// SetupQuotaWebhooks registers the validating webhooks of the muster.dev kinds.
func SetupQuotaWebhooks(mgr ctrl.Manager) error {
	for _, setup := range []func(ctrl.Manager) error{SetupClusterQueueWebhook, SetupCohortWebhook, SetupResourceFlavorWebhook} {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	return nil
}
