// Package jobs registers the job kinds Muster manages: for each enabled kind,
// the generic reconciler and the generic webhooks over its adapter.
package jobs

import (
	"context"
	"fmt"
	"slices"
	"time"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs/job"
	"github.com/musterhq/muster/controllers/jobs/pytorchjob"
	"github.com/musterhq/muster/controllers/jobs/raycluster"
)

// crdPollInterval is how often an integration whose CRD is missing looks
// for it again.
const crdPollInterval = 5 * time.Second

// integration is one job kind, whatever its Go type.
type integration interface {
	framework() string
	groupKind() (string, string, string)
	setupWebhook(mgr ctrl.Manager, opts jobframework.Options) error
	setupController(mgr ctrl.Manager, opts jobframework.Options) error
}

type kind[T client.Object] struct{ jobframework.Kind[T] }

func (k kind[T]) framework() string { return k.Framework }

func (k kind[T]) groupKind() (string, string, string) { return k.GVK.Group, k.GVK.Kind, k.GVK.Version }

func (k kind[T]) setupWebhook(mgr ctrl.Manager, opts jobframework.Options) error {
	return jobframework.SetupWebhook(mgr, k.Kind, opts)
}

func (k kind[T]) setupController(mgr ctrl.Manager, opts jobframework.Options) error {
	return jobframework.NewReconciler(mgr, k.Kind, opts).SetupWithManager(mgr)
}

// all lists every kind Muster knows.
var all = []integration{
	kind[*batchv1.Job]{job.Kind},
	kind[*kftraining.PyTorchJob]{pytorchjob.Kind},
	kind[*rayv1.RayCluster]{raycluster.Kind},
}

// SetupWebhooks registers the webhooks of the enabled kinds, all of them:
// the API server calls them only once a kind's CRD exists.
func SetupWebhooks(mgr ctrl.Manager, cfg *configv1beta1.Configuration, opts jobframework.Options) error {
	for _, i := range all {
		if !slices.Contains(cfg.Integrations.Frameworks, i.framework()) {
			continue
		}
		if err := i.setupWebhook(mgr, opts); err != nil {
			return fmt.Errorf("setting up the %s webhook: %w", i.framework(), err)
		}
	}
	return nil
}

// SetupControllers registers the reconcilers of the enabled kinds. A kind
// whose CRD is not installed gets its controller when the CRD appears; the
// manager starts, and serves the other kinds, meanwhile.
func SetupControllers(ctx context.Context, mgr ctrl.Manager, cfg *configv1beta1.Configuration, opts jobframework.Options) error {
	if err := jobframework.SetupOwnerIndex(ctx, mgr); err != nil {
		return err
	}
	for _, i := range all {
		if !slices.Contains(cfg.Integrations.Frameworks, i.framework()) {
			continue
		}
		if crdInstalled(mgr, i) {
			if err := i.setupController(mgr, opts); err != nil {
				return fmt.Errorf("setting up the %s reconciler: %w", i.framework(), err)
			}
			continue
		}
		if err := mgr.Add(&crdWaiter{mgr: mgr, integration: i, opts: opts}); err != nil {
			return err
		}
	}
	return nil
}

func crdInstalled(mgr ctrl.Manager, i integration) bool {
	group, kind, version := i.groupKind()
	_, err := mgr.GetRESTMapper().RESTMapping(schemaGroupKind(group, kind), version)
	return err == nil
}

// crdWaiter starts an integration's controller once its CRD is installed.
type crdWaiter struct {
	mgr         ctrl.Manager
	integration integration
	opts        jobframework.Options
}

var _ manager.LeaderElectionRunnable = (*crdWaiter)(nil)

// NeedLeaderElection is false: the waiter only adds the controller, which
// itself runs on the leader.
func (w *crdWaiter) NeedLeaderElection() bool { return false }

func (w *crdWaiter) Start(ctx context.Context) error {
	log := ctrl.Log.WithName("integrations").WithValues("framework", w.integration.framework())
	log.Info("Integration waits for its CRD; other kinds are served meanwhile")
	err := wait.PollUntilContextCancel(ctx, crdPollInterval, true, func(context.Context) (bool, error) {
		return crdInstalled(w.mgr, w.integration), nil
	})
	if err != nil {
		return nil // the manager is stopping
	}
	if err := w.integration.setupController(w.mgr, w.opts); err != nil {
		return fmt.Errorf("starting the %s integration: %w", w.integration.framework(), err)
	}
	log.Info("Started integration after its CRD was installed")
	return nil
}

func schemaGroupKind(group, kind string) schema.GroupKind {
	return schema.GroupKind{Group: group, Kind: kind}
}
