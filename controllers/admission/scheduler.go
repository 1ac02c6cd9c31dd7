package admission

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/metrics"
	"github.com/musterhq/muster/controllers/scheduling"
	"github.com/musterhq/muster/controllers/wlstatus"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/scheduler"
	"github.com/musterhq/muster/internal/workload"
)

// Scheduler is the admission loop. It runs only on the leader: it rebuilds
// the core from the API, then, whenever something may have become
// admissible, runs one cycle of the core over a snapshot and applies the
// decisions: assume in the cache, then write the Workload's status, and undo
// the assumption if the write fails.
type Scheduler struct {
	client   client.Client
	reader   client.Reader
	state    *scheduling.State
	recorder events.EventRecorder
	clock    clock.Clock
	// reasons writes pending reasons off the scheduling path.
	reasons *reasonWriter
	// writes runs the admission writes, off the cycle.
	writes *writeQueue
	// wake runs a cycle when a waiting preemptor may preempt, or a failed
	// eviction is to be retried.
	wake *waker
}

func newScheduler(c client.Client, reader client.Reader, state *scheduling.State, recorder events.EventRecorder, clk clock.WithTicker, clientQPS float32) *Scheduler {
	s := &Scheduler{
		client: c, reader: reader, state: state, recorder: recorder, clock: clk,
		reasons: newReasonWriter(c, recorder, clk, clientQPS),
		writes:  newWriteQueue(clk, state.Queues.Notify, clientQPS, nil),
		wake:    &waker{clock: clk, notify: state.Queues.Notify},
	}
	state.OnForget = s.reasons.forget
	state.ReasonOf = s.reasons.reason
	return s
}

// pendingRefresh is how stale the numbers of an unchanged pending reason
// may get. A reason that only differs in its quantities (available quota
// moves with every admission) is rewritten at most this often, so a large
// backlog does not turn every admission into hundreds of status writes.
const pendingRefresh = 30 * time.Second

// Start rebuilds the core and runs cycles until ctx ends.
func (s *Scheduler) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("scheduler")
	ctx = log.IntoContext(ctx, logger)
	if err := s.state.WaitSynced(ctx); err != nil {
		return nil //nolint:nilerr // stopped before the state was rebuilt
	}
	if err := s.state.RestoreDecayedFrom(ctx, s.reader); err != nil {
		return fmt.Errorf("restoring decayed usage: %w", err)
	}
	s.state.BecomeLeader(ctx, s.reader)
	s.state.Queues.Notify()
	s.settle(ctx)
	logger.Info("Started scheduler")
	go s.reasons.run(ctx, 2, func(key string) (bool, bool) { return s.state.Queues.NearHead(key, describedDepth) })
	for s.state.Queues.Wait(ctx) {
		s.cycle(ctx)
	}
	s.drain()
	return nil
}

// After a start, the first cycle waits until no new workload has been
// queued for settleQuiet, at most settleMax.
const (
	settleQuiet = 500 * time.Millisecond
	settleMax   = 5 * time.Second
)

// settle holds the first cycle while the job reconcilers create the
// Workloads of jobs that existed before Muster (re)started: they do so
// several at a time, in no order, and a cycle run on the first to arrive
// would admit it ahead of older jobs whose Workloads come a moment later.
// Once they are all queued, their jobs' creation times order them.
func (s *Scheduler) settle(ctx context.Context) {
	deadline := s.clock.Now().Add(settleMax)
	last := s.state.Queues.Inserts()
	for s.clock.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-s.clock.After(settleQuiet):
		}
		n := s.state.Queues.Inserts()
		if n == last {
			return
		}
		last = n
	}
}

// drain waits for the admission writes in flight.
func (s *Scheduler) drain() { s.writes.drain() }

// NeedLeaderElection makes the scheduler run on the leader only.
func (s *Scheduler) NeedLeaderElection() bool { return true }

// cycle decides on a snapshot and applies the decisions.
func (s *Scheduler) cycle(ctx context.Context) {
	budget := s.writes.budget()
	if budget <= 0 {
		s.writes.stoppedAtBudget()
		return
	}
	now := s.clock.Now()
	s.state.Queues.UnparkDue(now)
	heads, seq := s.state.Queues.Heads()
	snapshot := s.state.Snapshot()
	snapshot.SetNow(now)
	snapshot.LimitAdmissions(budget)
	decisions := scheduler.Schedule(snapshot, heads)
	admitted := admissions(decisions)
	metrics.ReportCycle(admitted > 0, s.clock.Since(now).Seconds())
	reportPreemptionSkips(heads, decisions)
	if wait := snapshot.RepairWait(); wait > 0 {
		// A NotReady node's grace period ends then: repair it.
		s.wake.after(ctx, wait)
	}
	if admitted == budget {
		defer s.writes.stoppedAtBudget()
	}
	for i := range decisions {
		s.apply(ctx, &decisions[i], seq, now)
	}
	// Once the cycle's admissions have left the queues: a workload is near
	// the head as of the cycle's end, whatever order it was decided in.
	for i := range decisions {
		if decisions[i].Kind() == scheduler.Wait {
			s.waits(&decisions[i])
		}
	}
}

// apply carries out one decision of the cycle that Heads numbered seq,
// then has the core settle it (Tracker.Settle) and wakes the loop when it
// asks to.
func (s *Scheduler) apply(ctx context.Context, d *scheduler.Decision, seq uint64, now time.Time) {
	switch d.Kind() {
	case scheduler.Evict:
		s.evict(ctx, d.Workload, nil, scheduling.EvictionReason(d.Evict), "", d.Message())
	case scheduler.Repair:
		s.replaceNodes(ctx, *d)
	case scheduler.Place:
		s.placeChecked(ctx, *d)
	case scheduler.Admit:
		s.admitDecided(ctx, d)
	case scheduler.Preempt:
		if failed := s.preempt(ctx, *d); len(failed) > 0 {
			// Not parked: the victims that are not evicting release nothing
			// that would wake it, so it tries again shortly.
			d.Park = false
			d.Pending = core.Pending{Kind: core.EvictionRetry, Workloads: failed}
			s.wake.after(ctx, preemptionRetry)
		}
		s.reasons.set(d.Workload.Key, d.Pending)
	}
	if again := s.state.Settle(d, seq, now); again > 0 {
		s.wake.after(ctx, again)
	}
}

// describedDepth is how deep in its queues a pending workload gets its
// reason written: the first describedDepth of each ClusterQueue and of each
// LocalQueue. A backlog of thousands then costs a few dozen writes, not one
// (and an event) per queued workload; the deeper ones' reasons are kept in
// memory for the visibility API and kubectl muster why, and written once
// they move up. Like Kueue, whose scheduler writes a reason only to the
// workloads its cycles try; docs/scheduling.md says where the two differ.
const describedDepth = 10

// waits records why a workload stays pending, written to it if it is near
// the head of its queues or its queue itself is what holds it. A workload
// no longer queued (deleted while the cycle decided) is not recorded.
func (s *Scheduler) waits(d *scheduler.Decision) {
	near, queued := s.state.Queues.NearHead(d.Workload.Key, describedDepth)
	switch {
	case !queued:
	case near, d.Pending.Kind == core.QueueInactive, d.Pending.Kind == core.LocalQueueHeld, d.Pending.Kind == core.NamespaceNotSelected:
		// A queue's configuration to fix is told to every workload it holds.
		s.reasons.set(d.Workload.Key, d.Pending)
	default:
		s.reasons.remember(d.Workload.Key, d.Pending)
	}
}

// admitDecided assumes an admission in the cache and queues its write.
func (s *Scheduler) admitDecided(ctx context.Context, d *scheduler.Decision) {
	s.reasons.forget(d.Workload.Key)
	wl := *d.Workload
	wl.Admission = d.Admission
	wl.AdmittedAt = s.clock.Now()
	// Assumed before it leaves the queues: a controller event in between
	// then sees it holding quota and does not queue it again.
	err := s.state.Cache.Assume(&wl)
	s.state.Queues.Delete(wl.Key)
	if err != nil {
		log.FromContext(ctx).V(2).Info("Skipped workload already holding quota", "workload", klog.KRef(wl.Namespace, wl.Name))
		return
	}
	s.writes.submit(func() { s.admit(ctx, &wl) })
}

// metricsWorkload is what the metrics label a workload with.
// reportPreemptionSkips sets, per ClusterQueue of the cycle, how many of
// its workloads could preempt but waited because another queue's
// preemption in the cycle takes back the same resources (Kueue's
// admission_cycle_preemption_skips).
func reportPreemptionSkips(heads map[string][]*core.Workload, ds []scheduler.Decision) {
	skipped := map[string]bool{}
	for i := range ds {
		if ds[i].Pending.Kind == core.ReclaimInCohort {
			skipped[ds[i].Workload.Key] = true
		}
	}
	for cq, wls := range heads {
		metrics.AdmissionCyclePreemptionSkips.WithLabelValues(cq).Set(float64(countSkipped(wls, skipped)))
	}
}

// countSkipped counts the workloads among wls that were skipped; the
// common cycle skips none and looks at nothing.
func countSkipped(wls []*core.Workload, skipped map[string]bool) int {
	if len(skipped) == 0 {
		return 0
	}
	n := 0
	for _, wl := range wls {
		if skipped[wl.Key] {
			n++
		}
	}
	return n
}

// admissions counts the decisions that admit a pending workload.
func admissions(ds []scheduler.Decision) int {
	n := 0
	for _, d := range ds {
		if d.AdmitsPending() {
			n++
		}
	}
	return n
}

// preemptionRetry is how soon a preemptor whose victims could not all be
// evicted tries again.
const preemptionRetry = 500 * time.Millisecond

// preempt evicts a decision's victims and returns those it could not.
func (s *Scheduler) preempt(ctx context.Context, d scheduler.Decision) []string {
	var failed []string
	for _, v := range d.Victims {
		reason := scheduling.PreemptionReason(v.Reason)
		msg := fmt.Sprintf("Preempted to accommodate workload %s (%s)", d.Workload.Key, reason)
		if !s.evict(ctx, v.Workload, d.Workload, musterv1beta1.ReasonPreempted, reason, msg) {
			failed = append(failed, v.Workload.Key)
		}
	}
	return failed
}

// evict tells an admitted workload to stop: Evicted (and Preempted for a
// victim). Its job reconciler then suspends the job and releases the quota.
// The cache counts it as evicting at once, so no other preemptor picks it.
// It reports whether the eviction was written: a victim whose admission is
// not written yet (assumed by an earlier cycle), or that changed under the
// write, is not evicted.
func (s *Scheduler) evict(ctx context.Context, victim, preemptor *core.Workload, reason, preemptionReason, msg string) bool {
	var wl musterv1beta1.Workload
	if err := s.client.Get(ctx, nameOf(victim), &wl); err != nil || !workload.HasQuotaReservation(&wl) {
		return false
	}
	s.reasons.schedulerWrote()
	now := s.clock.Now()
	transition := func(wl *musterv1beta1.Workload) bool { return workload.Evict(wl, reason, msg, now) }
	if preemptor != nil {
		transition = func(wl *musterv1beta1.Workload) bool { return workload.Preempt(wl, preemptionReason, msg, now) }
	}
	wrote, err := wlstatus.Patch(ctx, s.client, &wl, transition)
	if err != nil {
		// Not marked evicting: the next cycle plans again.
		log.FromContext(ctx).V(2).Info("Eviction write failed; planned again next cycle", "workload", klog.KObj(&wl), "error", err.Error())
		s.state.Queues.Notify()
		return false
	}
	s.state.Cache.MarkEvicting(victim.Key)
	if !wrote {
		return true // it says so already
	}
	cq := string(wl.Status.Admission.ClusterQueue)
	metrics.ReportEviction(&wl, reason, preemptionReason, now)
	if preemptor != nil {
		preemptingQueue, _ := s.state.Queues.ClusterQueueOf(preemptor.Namespace, preemptor.Queue)
		metrics.PreemptedWorkloadsTotal.WithLabelValues(preemptingQueue, preemptionReason).Inc()
	}
	s.recorder.Eventf(&wl, nil, corev1.EventTypeNormal, reason, "Evict", msg)
	s.state.Record(scheduling.RecentEvent{Time: now, Kind: reason, Workload: wl.Namespace + "/" + wl.Name, ClusterQueue: cq, Message: msg})
	logger := log.FromContext(ctx).WithValues("workload", klog.KObj(&wl), "clusterQueue", klog.KRef("", cq), "reason", reason)
	if preemptor != nil {
		logger = logger.WithValues("detail", preemptionReason, "preemptor", klog.KRef(preemptor.Namespace, preemptor.Name))
	}
	logger.Info("Evicted workload")
	return true
}

// admit writes an assumed admission to the Workload's status in one write:
// the admission, QuotaReserved and Admitted. On failure it undoes the
// assumption and requeues the workload.
func (s *Scheduler) admit(ctx context.Context, assumed *core.Workload) {
	s.reasons.schedulerWrote()
	logger := log.FromContext(ctx).WithValues("workload", klog.KRef(assumed.Namespace, assumed.Name), "clusterQueue", klog.KRef("", assumed.Admission.ClusterQueue))
	err := s.writeAdmission(ctx, assumed)
	if err != nil {
		s.state.Cache.Forget(assumed.Key)
		logger.V(2).Info("Undid an admission whose write failed", "error", err.Error())
		s.reapply(ctx, assumed)
		return
	}
	logger.V(2).Info("Admitted workload")
}

func (s *Scheduler) writeAdmission(ctx context.Context, assumed *core.Workload) error {
	var wl musterv1beta1.Workload
	if err := s.client.Get(ctx, nameOf(assumed), &wl); err != nil {
		return err
	}
	if wl.ResourceVersion != assumed.ResourceVersion {
		return fmt.Errorf("workload changed since it was decided on (version %s, now %s)", assumed.ResourceVersion, wl.ResourceVersion)
	}
	now := s.clock.Now()
	cq := assumed.Admission.ClusterQueue
	checks := s.state.Cache.ChecksFor(assumed.Admission)
	if _, err := wlstatus.Patch(ctx, s.client, &wl, func(wl *musterv1beta1.Workload) bool {
		return workload.ReserveForChecks(wl, scheduling.FromAdmission(assumed.Admission), checks, now)
	}); err != nil {
		return err
	}
	wait := now.Sub(metrics.QueuedAt(&wl))
	if len(checks) > 0 {
		metrics.ReportQuotaReserved(metrics.WorkloadOf(&wl), wait)
		msg := fmt.Sprintf("Quota reserved in ClusterQueue %s (%s), wait time since queued was %s; waiting for admission checks %s",
			cq, flavorsOf(assumed.Admission), wait.Round(time.Second), strings.Join(checks, ", "))
		s.recorder.Eventf(&wl, nil, corev1.EventTypeNormal, musterv1beta1.ReasonQuotaReserved, "Reserve", "%s", msg)
		s.state.Record(scheduling.RecentEvent{Time: now, Kind: musterv1beta1.ReasonQuotaReserved, Workload: wl.Namespace + "/" + wl.Name, ClusterQueue: cq, Message: msg})
		return nil
	}
	metrics.ReportAdmission(metrics.WorkloadOf(&wl), wait)
	// One event for the one write: an admission is its quota reservation
	// (Kueue writes a QuotaReserved and an Admitted event, a third of its
	// API writes per workload).
	msg := fmt.Sprintf("Quota reserved and admitted in ClusterQueue %s (%s), wait time since queued was %s",
		cq, flavorsOf(assumed.Admission), wait.Round(time.Second))
	s.recorder.Eventf(&wl, nil, corev1.EventTypeNormal, musterv1beta1.ReasonQuotaReserved, "Admit", "%s", msg)
	s.state.Record(scheduling.RecentEvent{Time: now, Kind: musterv1beta1.ReasonAdmitted, Workload: wl.Namespace + "/" + wl.Name, ClusterQueue: cq, Message: msg})
	return nil
}

// flavorsOf says where an admission put each pod set: "main: 4 pods on
// a100", with every flavor it takes for a pod set of several.
func flavorsOf(adm *core.Admission) string {
	parts := make([]string, 0, len(adm.PodSets))
	for _, ps := range adm.PodSets {
		var flavors []string
		for _, res := range slices.Sorted(maps.Keys(ps.Flavors)) {
			if f := ps.Flavors[res]; !slices.Contains(flavors, f) {
				flavors = append(flavors, f)
			}
		}
		parts = append(parts, fmt.Sprintf("%s: %d pods on %s", ps.Name, ps.Count, strings.Join(flavors, ", ")))
	}
	return strings.Join(parts, "; ")
}

// reapply puts a workload whose admission was undone back where its latest
// version says it belongs. Updates that arrived while it was assumed were
// not queued, so the stale copy is not used.
func (s *Scheduler) reapply(ctx context.Context, w *core.Workload) {
	var wl musterv1beta1.Workload
	if err := s.reader.Get(ctx, nameOf(w), &wl); err != nil {
		if apierrors.IsNotFound(err) {
			s.state.Forget(w.Key)
		}
		return
	}
	var ns corev1.Namespace
	_ = s.reader.Get(ctx, types.NamespacedName{Name: wl.Namespace}, &ns)
	s.state.ApplyWorkload(&wl, ns.Labels, s.clock.Now())
}

// replaceNodes writes an admitted workload's repaired placement: the pods
// that were on failed nodes get new ones in the same domain. The cache
// takes the new placement at once; if the write fails, the workload's
// current version is applied again and the next cycle retries.
func (s *Scheduler) replaceNodes(ctx context.Context, d scheduler.Decision) {
	w := *d.Workload
	w.Admission = d.Admission
	s.state.Cache.AddOrUpdateWorkload(&w)
	var wl musterv1beta1.Workload
	err := s.client.Get(ctx, nameOf(&w), &wl)
	if err == nil {
		s.reasons.schedulerWrote()
		_, err = wlstatus.Patch(ctx, s.client, &wl, func(wl *musterv1beta1.Workload) bool {
			return workload.ReplacePlacement(wl, scheduling.FromAdmission(d.Admission))
		})
	}
	logger := log.FromContext(ctx).WithValues("workload", klog.KRef(w.Namespace, w.Name), "nodes", d.Lost)
	if err != nil {
		logger.V(2).Info("Placement repair write failed; retried next cycle", "error", err.Error())
		s.reapply(ctx, &w)
		s.wake.after(ctx, preemptionRetry)
		return
	}
	s.recorder.Eventf(&wl, nil, corev1.EventTypeWarning, musterv1beta1.ReasonNodeReplaced, "ReplaceNode", "%s", d.Message())
	logger.Info("Replaced failed nodes of a placement")
}

func nameOf(wl *core.Workload) types.NamespacedName {
	return types.NamespacedName{Namespace: wl.Namespace, Name: wl.Name}
}

// placeChecked writes the placement of a workload whose admission checks
// provisioned its nodes, and admits it, in one write. The cache takes the
// placement at once. A workload whose nodes are not there yet keeps its
// quota; the cycle that sees them places it.
func (s *Scheduler) placeChecked(ctx context.Context, d scheduler.Decision) {
	logger := log.FromContext(ctx).WithValues("workload", klog.KRef(d.Workload.Namespace, d.Workload.Name))
	if d.Admission == nil {
		logger.V(2).Info("Provisioned nodes not ready for the placement yet", "detail", d.EvictDetail)
		return
	}
	w := *d.Workload
	w.Admission, w.AwaitingPlacement = d.Admission, false
	s.state.Cache.AddOrUpdateWorkload(&w)
	var wl musterv1beta1.Workload
	err := s.client.Get(ctx, nameOf(&w), &wl)
	now := s.clock.Now()
	wrote := false
	if err == nil {
		s.reasons.schedulerWrote()
		wrote, err = wlstatus.Patch(ctx, s.client, &wl, func(wl *musterv1beta1.Workload) bool {
			// Placed even when not admitted now (a check added to its
			// queue meanwhile): the lifecycle admits it once that passes.
			placed := workload.PlaceDelayed(wl, scheduling.FromAdmission(d.Admission))
			workload.AdmitChecked(wl, now)
			return placed
		})
	}
	if err == nil && !wrote {
		// Evicted or requeued meanwhile: the cache takes the API's view.
		s.reapply(ctx, &w)
		return
	}
	if err != nil {
		logger.V(2).Info("Delayed placement write failed; retried next cycle", "error", err.Error())
		s.reapply(ctx, &w)
		s.wake.after(ctx, preemptionRetry)
		return
	}
	if !workload.IsAdmitted(&wl) {
		logger.Info("Placed a provisioned workload; it waits for a check its queue added")
		return
	}
	metrics.ReportAdmittedAfterChecks(&wl, now)
	msg := fmt.Sprintf("Placed on the provisioned nodes and admitted (%s)", flavorsOf(d.Admission))
	s.recorder.Eventf(&wl, nil, corev1.EventTypeNormal, musterv1beta1.ReasonAdmitted, "Admit", "%s", msg)
	logger.Info("Placed a provisioned workload and admitted it")
}
