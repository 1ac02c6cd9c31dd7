package multicluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/wlstatus"
	"github.com/musterhq/muster/internal/workload"
)

// reconnectWait is how soon a workload whose worker is still being
// connected to is looked at again.
const reconnectWait = 5 * time.Second

// nominate sends copies of a workload that no worker admitted yet to the
// worker clusters the dispatcher picks, takes back those it no longer
// picks, and, once one of them admits its copy, makes that one the
// workload's.
func (d *Dispatcher) nominate(ctx context.Context, dp *dispatch) (ctrl.Result, error) {
	if dp.job == nil {
		return ctrl.Result{}, nil
	}
	if d.Pool.settling(dp.cfg.Spec.Clusters) {
		// Just started: the workers' copies are not known yet.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	usable := d.usableClusters(dp.cfg)
	targets, nextRound := d.targets(dp.wl, dp.cfg.Spec.Clusters, usable)
	var winner string
	var winnerAt time.Time
	var failed []error
	for i, a := range d.sendCopies(ctx, dp, usable, targets) {
		failed = appendErr(failed, usable[i], a.err)
		if cp := a.copy; cp != nil && workload.IsAdmitted(cp) && (winner == "" || admittedAt(cp).Before(winnerAt)) {
			winner, winnerAt = usable[i], admittedAt(cp)
		}
	}
	if winner != "" {
		return ctrl.Result{}, d.win(ctx, dp, winner)
	}
	if err := d.recordNomination(ctx, dp, targets, failed); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: nextRound}, nil
}

// sent is what one worker has of a workload.
type sent struct {
	copy *musterv1beta1.Workload
	err  error
}

// sendCopies makes every usable worker hold a copy of the workload if it
// is a target, and none if not, all workers at once (each is a round trip
// to another API server); it returns what each holds, in usable's order.
// The connections are taken before the goroutines start: one dropped
// meanwhile (its Secret changed) is still a usable object.
func (d *Dispatcher) sendCopies(ctx context.Context, dp *dispatch, usable, targets []string) []sent {
	out := make([]sent, len(usable))
	var wg sync.WaitGroup
	for i, name := range usable {
		rem := d.Pool.get(name)
		if rem == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !slices.Contains(targets, name) {
				out[i].err = d.removeFrom(ctx, rem, client.ObjectKeyFromObject(dp.wl), dp.job, false)
				return
			}
			out[i].copy, out[i].err = d.ensureCopy(ctx, rem, dp.wl)
		}()
	}
	wg.Wait()
	return out
}

func appendErr(errs []error, cluster string, err error) []error {
	if err == nil {
		return errs
	}
	return append(errs, fmt.Errorf("%s: %w", cluster, err))
}

// usableClusters are the config's worker clusters Muster reaches now, in
// the config's order.
func (d *Dispatcher) usableClusters(cfg *musterv1beta1.MultiClusterConfig) []string {
	var out []string
	for _, name := range cfg.Spec.Clusters {
		if r := d.Pool.get(name); r != nil && r.health().usable {
			out = append(out, name)
		}
	}
	return out
}

// targets are the clusters a workload is sent to: every usable one, or
// with the incremental dispatcher those among the config's first
// incrementalStep clusters, incrementalStep more each roundTimeout the
// workload waits (counted from its reservation, so a restart does not
// start over; the window is the config's order, so a worker that blips
// does not move it); nextRound is when the next round starts, 0 if none
// will.
func (d *Dispatcher) targets(wl *musterv1beta1.Workload, clusters, usable []string) ([]string, time.Duration) {
	if !d.Incremental {
		return usable, 0
	}
	waited := d.Clock.Since(workload.ReservedAt(wl))
	rounds := int(waited/roundTimeout) + 1
	n := min(rounds*incrementalStep, len(clusters))
	var out []string
	for _, c := range clusters[:n] {
		if slices.Contains(usable, c) {
			out = append(out, c)
		}
	}
	if n == len(clusters) {
		return out, 0
	}
	return out, time.Duration(rounds)*roundTimeout - waited
}

// recordNomination writes where the workload's copies are, and why some
// could not be made.
func (d *Dispatcher) recordNomination(ctx context.Context, dp *dispatch, targets []string, failed []error) error {
	msg := fmt.Sprintf("Waiting for one of the worker clusters %v to admit the workload", targets)
	if len(targets) == 0 {
		msg = fmt.Sprintf("No worker cluster of MultiClusterConfig %s is active", dp.cfg.Name)
	}
	if err := errors.Join(failed...); err != nil {
		msg += "; " + strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	_, err := wlstatus.Patch(ctx, d.Client, dp.wl, func(wl *musterv1beta1.Workload) bool {
		changed := !slices.Equal(wl.Status.NominatedClusterNames, targets)
		wl.Status.NominatedClusterNames = slices.Clone(targets)
		st := musterv1beta1.AdmissionCheckState{Name: musterv1beta1.AdmissionCheckReference(dp.check), State: musterv1beta1.CheckStatePending, Message: msg}
		return workload.SetCheckState(wl, st, d.Clock.Now()) || changed
	})
	return err
}

// win records the worker that admitted the workload's copy first as the
// one it runs in, and nothing else: the job is created there by the next
// step, from the recorded choice. The record is written with the
// workload's resourceVersion, so a step that read an older workload (the
// cache lags) and would pick another worker fails to write, and never
// creates a job anywhere: a job is created only in a worker already
// recorded, never in two.
func (d *Dispatcher) win(ctx context.Context, dp *dispatch, cluster string) error {
	now := d.Clock.Now()
	st := musterv1beta1.AdmissionCheckState{
		Name: musterv1beta1.AdmissionCheckReference(dp.check), State: musterv1beta1.CheckStatePending,
		Message: fmt.Sprintf("Admitted on %q; creating its job there", cluster),
	}
	_, err := wlstatus.Patch(ctx, d.Client, dp.wl, func(wl *musterv1beta1.Workload) bool {
		if wl.Status.ClusterName != "" {
			return false
		}
		wl.Status.ClusterName, wl.Status.NominatedClusterNames = cluster, nil
		workload.SetCheckState(wl, st, now)
		return true
	})
	return err
}

// ready marks the check Ready once the job exists in the worker the
// workload was recorded to run in.
func (d *Dispatcher) ready(ctx context.Context, dp *dispatch) error {
	if st := workload.FindCheck(dp.wl, dp.check); st == nil || st.State == musterv1beta1.CheckStateReady {
		return nil
	}
	return d.setCheck(ctx, dp, musterv1beta1.CheckStateReady, fmt.Sprintf("The workload was admitted on %q", dp.wl.Status.ClusterName))
}

// follow keeps a workload that runs in a worker in step with it: the job's
// status is mirrored, the workload finishes when the worker's copy does,
// and it is dispatched again if the copy is evicted or gone or the worker
// is lost for longer than WorkerLostTimeout.
func (d *Dispatcher) follow(ctx context.Context, dp *dispatch) (ctrl.Result, error) {
	cluster := dp.wl.Status.ClusterName
	if !slices.Contains(dp.cfg.Spec.Clusters, cluster) {
		return ctrl.Result{}, d.setCheck(ctx, dp, musterv1beta1.CheckStateRetry,
			fmt.Sprintf("The worker cluster %q is no longer one of MultiClusterConfig %s's: dispatched again", cluster, dp.cfg.Name))
	}
	rem := d.Pool.get(cluster)
	if rem == nil || !rem.health().usable {
		return d.waitForLost(ctx, dp)
	}
	cp, err := rem.workload(ctx, dp.wl.Namespace, dp.wl.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case cp == nil || !sameReservation(cp, dp.wl) || !cp.DeletionTimestamp.IsZero():
		return ctrl.Result{}, d.setCheck(ctx, dp, musterv1beta1.CheckStateRetry,
			fmt.Sprintf("The workload's copy in worker cluster %q is gone: dispatched again", cluster))
	case workload.IsFinished(cp):
		return ctrl.Result{}, d.finish(ctx, dp, rem, cp)
	case workload.IsEvicted(cp) || !workload.HoldsQuota(cp):
		// Not at once: an eviction for the job's own sake there (its pods
		// never became ready) would loop through the workers.
		return ctrl.Result{}, d.retryLater(ctx, dp, fmt.Sprintf("The workload was evicted on worker cluster %q: dispatched again", cluster))
	}
	// The losing copies go first: they hold quota in their workers while
	// they are there, whatever happens to this step.
	if err := d.removeOthers(ctx, dp, cluster); err != nil {
		return ctrl.Result{}, err
	}
	switch err := d.ensureRemoteJob(ctx, rem, dp, metav1.GetControllerOf(cp) != nil); {
	case errors.Is(err, errJobGone):
		return ctrl.Result{}, d.setCheck(ctx, dp, musterv1beta1.CheckStateRetry,
			fmt.Sprintf("The job was deleted in worker cluster %q: dispatched again", cluster))
	case errors.Is(err, errJobBlocked):
		return ctrl.Result{}, d.retryLater(ctx, dp, fmt.Sprintf("Worker cluster %q admitted the workload but %v: dispatched again after a backoff", cluster, err))
	case err != nil:
		return ctrl.Result{}, err
	}
	if err := d.ready(ctx, dp); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, d.mirror(ctx, rem, dp, false)
}

// waitForLost dispatches again a workload whose worker has not answered
// for WorkerLostTimeout, and looks again when that time is up. The time
// counts from the MultiCluster's Active condition, which outlives a
// restart of the manager: one that restarts while a worker is down does
// not start counting again, and one that has not reconnected yet (its
// condition still True) only waits.
func (d *Dispatcher) waitForLost(ctx context.Context, dp *dispatch) (ctrl.Result, error) {
	cluster := dp.wl.Status.ClusterName
	var mc musterv1beta1.MultiCluster
	if err := d.Client.Get(ctx, client.ObjectKey{Name: cluster}, &mc); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, d.setCheck(ctx, dp, musterv1beta1.CheckStateRetry,
			fmt.Sprintf("The worker cluster %q has no MultiCluster any more: dispatched again", cluster))
	}
	c := meta.FindStatusCondition(mc.Status.Conditions, musterv1beta1.MultiClusterActive)
	if c == nil || c.Status == metav1.ConditionTrue {
		return ctrl.Result{RequeueAfter: reconnectWait}, nil
	}
	lost := d.Clock.Since(c.LastTransitionTime.Time)
	if left := d.WorkerLostTimeout - lost; left > 0 {
		log.FromContext(ctx).V(2).Info("Worker cluster lost; waiting before dispatching again", "cluster", cluster, "left", left)
		return ctrl.Result{RequeueAfter: left}, nil
	}
	return ctrl.Result{}, d.setCheck(ctx, dp, musterv1beta1.CheckStateRetry,
		fmt.Sprintf("The worker cluster %q has not been usable for %s (%s: %s; workerLostTimeout %s): dispatched again",
			cluster, lost.Round(time.Second), c.Reason, c.Message, d.WorkerLostTimeout))
}

// finish mirrors the job's final status and finishes the workload as its
// copy finished.
func (d *Dispatcher) finish(ctx context.Context, dp *dispatch, rem *remote, cp *musterv1beta1.Workload) error {
	if err := d.mirror(ctx, rem, dp, true); err != nil {
		// The workload finishes all the same: its quota must not wait on
		// a status copy.
		log.FromContext(ctx).Error(err, "Cannot mirror the finished job's status", "workload", klog.KObj(dp.wl), "cluster", rem.name)
	}
	reason, msg := musterv1beta1.ReasonSucceeded, "Finished in worker cluster "+rem.name
	for _, c := range cp.Status.Conditions {
		if c.Type == musterv1beta1.WorkloadFinished {
			reason, msg = c.Reason, c.Message
		}
	}
	return jobframework.FinishWorkload(ctx, d.Client, d.Clock.Now(), dp.wl, reason, msg)
}

// removeOthers takes back the copies in the clusters the workload does not
// run in (those of the nomination, or one left by a worker that was lost
// and came back).
func (d *Dispatcher) removeOthers(ctx context.Context, dp *dispatch, keep string) error {
	var others []string
	for _, name := range dp.cfg.Spec.Clusters {
		if rem := d.Pool.get(name); name != keep && rem != nil && rem.health().usable {
			others = append(others, name)
		}
	}
	var errs []error
	for i, a := range d.sendCopies(ctx, dp, others, nil) {
		errs = appendErr(errs, others[i], a.err)
	}
	return errors.Join(errs...)
}
