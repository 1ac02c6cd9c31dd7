// Package webhooks validates the muster.dev objects admins write:
// ClusterQueues, Cohorts and ResourceFlavors. The webhooks of jobs (suspend
// a job that names a queue, keep an admitted job's shape) are the job
// framework's, as in Kueue: one generic webhook
// (controllers/jobframework/webhook.go) registered with each kind
// (controllers/jobs/<kind>). cmd/muster/app sets up both.
package webhooks

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// Setup registers the validating webhooks of the muster.dev kinds.
func Setup(mgr ctrl.Manager) error {
	for _, setup := range []func(ctrl.Manager) error{SetupClusterQueueWebhook, SetupCohortWebhook, SetupResourceFlavorWebhook} {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	return nil
}
