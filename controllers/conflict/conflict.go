// Package conflict turns optimistic-concurrency conflicts into quiet
// requeues. A conflict means another writer changed the object first; the
// reconcile is simply run again on the newer version. It is not an error
// worth an error-level log line.
package conflict

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// retryAfter is how soon a reconcile that lost a write race runs again.
// The winner's write usually reaches the cache (and queues a reconcile of
// its own) sooner; this is the fallback if it does not.
const retryAfter = 100 * time.Millisecond

// Requeue returns a reconcile's outcome, with a conflict replaced by a
// requeue.
func Requeue(ctx context.Context, res ctrl.Result, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		log.FromContext(ctx).V(2).Info("Requeued after a write conflict", "error", err.Error())
		return ctrl.Result{RequeueAfter: retryAfter}, nil
	}
	return res, err
}
