// Package jobs registers the job kinds Muster manages: for each enabled kind,
// the generic reconciler and the generic webhooks over its adapter.
package jobs

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs/job"
	"github.com/musterhq/muster/webhooks"
)

// integration is one job kind, whatever its Go type.
type integration interface {
	framework() string
	setup(mgr ctrl.Manager, opts jobframework.Options) error
}

type kind[T client.Object] struct{ jobframework.Kind[T] }

func (k kind[T]) framework() string { return k.Framework }

func (k kind[T]) setup(mgr ctrl.Manager, opts jobframework.Options) error {
	if err := jobframework.NewReconciler(mgr, k.Kind, opts).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the %s reconciler: %w", k.Framework, err)
	}
	if err := webhooks.SetupJobWebhook(mgr, k.Kind, opts); err != nil {
		return fmt.Errorf("setting up the %s webhook: %w", k.Framework, err)
	}
	return nil
}

// all lists every kind Muster knows.
var all = []integration{
	kind[*batchv1.Job]{job.Kind},
}

// Setup registers the enabled kinds.
func Setup(ctx context.Context, mgr ctrl.Manager, cfg *configv1beta1.Configuration) error {
	opts := jobframework.Options{
		AcceptKueueQueueLabel: *cfg.Integrations.AcceptKueueQueueLabel,
		ManagerNamespace:      *cfg.Namespace,
	}
	if err := jobframework.SetupOwnerIndex(ctx, mgr); err != nil {
		return err
	}
	for _, i := range all {
		if !slices.Contains(cfg.Integrations.Frameworks, i.framework()) {
			continue
		}
		if err := i.setup(mgr, opts); err != nil {
			return err
		}
	}
	return nil
}
