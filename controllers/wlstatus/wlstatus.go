// Package wlstatus writes the transitions of internal/workload to the API:
// every controller that moves a Workload through its life writes the status
// the same way, with an optimistic lock.
package wlstatus

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// Patch applies a transition to wl and, if it changed anything, patches the
// status with an optimistic lock: the write fails with a conflict when the
// workload changed since it was read, rather than overwriting a decision
// taken on the newer version. It reports whether it wrote; on an error wl
// holds the transition but the API does not.
func Patch(ctx context.Context, c client.Client, wl *musterv1beta1.Workload, transition func(*musterv1beta1.Workload) bool) (bool, error) {
	orig := wl.DeepCopy()
	if !transition(wl) {
		return false, nil
	}
	return true, c.Status().Patch(ctx, wl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}
