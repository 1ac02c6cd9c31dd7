package jobframework

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// crdPollInterval is how often an integration whose CRD is missing looks
// for it again.
const crdPollInterval = 5 * time.Second

// crdInstalled reports whether the API server serves the kind.
func crdInstalled(mapper meta.RESTMapper, gvk schema.GroupVersionKind) bool {
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

// crdWaiter starts an integration's controller once its CRD is installed.
type crdWaiter struct {
	mgr         ctrl.Manager
	integration Integration
	opts        Options
}

var _ manager.LeaderElectionRunnable = (*crdWaiter)(nil)

// NeedLeaderElection is false: the waiter only adds the controller, which
// itself runs on the leader.
func (w *crdWaiter) NeedLeaderElection() bool { return false }

func (w *crdWaiter) Start(ctx context.Context) error {
	log := ctrl.Log.WithName("integrations").WithValues("framework", w.integration.Name)
	log.Info("Integration waits for its CRD; other kinds are served meanwhile")
	err := wait.PollUntilContextCancel(ctx, crdPollInterval, true, func(context.Context) (bool, error) {
		return crdInstalled(w.mgr.GetRESTMapper(), w.integration.GVK), nil
	})
	if err != nil {
		return nil // the manager is stopping
	}
	if err := w.integration.SetupReconciler(w.mgr, w.opts); err != nil {
		return fmt.Errorf("starting the %s integration: %w", w.integration.Name, err)
	}
	log.Info("Started integration after its CRD was installed")
	return nil
}
