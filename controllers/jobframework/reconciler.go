package jobframework

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
	"github.com/musterhq/muster/controllers/metrics"
	"github.com/musterhq/muster/controllers/wlstatus"
	"github.com/musterhq/muster/internal/workload"
)

// Event reasons on jobs and workloads. Condition reasons are API
// (apis/muster/v1beta1); these only name events.
const (
	ReasonSuspended       = "Suspended"
	ReasonCreatedWorkload = "CreatedWorkload"
	ReasonStarted         = "Started"
	ReasonStopped         = "Stopped"
	ReasonFinished        = "Finished"
	// ReasonWorkloadComposeFailed is Kueue's name for a job whose Workload
	// cannot be made (its WorkloadPriorityClass does not exist, say).
	ReasonWorkloadComposeFailed = "ErrWorkloadCompose"
	// ReasonNotGated is a job of a kind that cannot be suspended (a Pod)
	// found running without a Workload: Muster leaves it alone.
	ReasonNotGated = "NotGated"
)

func stoppedByDeletion(job GenericJob) bool {
	_, ok := job.(JobStoppedByDeletion)
	return ok
}

// composeRetry is how soon a job whose Workload could not be made for
// want of an object (a WorkloadPriorityClass created after the job) is
// tried again, rather than the error backoff's growing delay.
const composeRetry = 15 * time.Second

// +kubebuilder:rbac:groups=muster.dev,resources=resourceflavors;workloadpriorityclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch

// Reconciler drives any job kind through its GenericJob adapter: one
// Workload per job, start on admission, stop on eviction, finish releases
// the quota.
type Reconciler[T client.Object] struct {
	client   client.Client
	recorder events.EventRecorder
	kind     Kind[T]
	opts     Options
}

// NewReconciler returns the reconciler of one job kind.
func NewReconciler[T client.Object](mgr ctrl.Manager, kind Kind[T], opts Options) *Reconciler[T] {
	return NewReconcilerWith(mgr.GetClient(), mgr.GetEventRecorder("muster-"+kind.GVK.Kind+"-controller"), kind, opts)
}

// NewReconcilerWith returns the reconciler of one job kind over a client
// and an event recorder of the caller's, e.g. a fake client in a unit test.
func NewReconcilerWith[T client.Object](c client.Client, rec events.EventRecorder, kind Kind[T], opts Options) *Reconciler[T] {
	return &Reconciler[T]{client: c, recorder: rec, kind: kind, opts: opts}
}

// Reconcile takes one job one step towards what its Workload says.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	return conflict.Requeue(ctx, res, err)
}

func (r *Reconciler[T]) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.deleteOrphanedWorkloads(ctx, req.Namespace, req.Name, "")
		}
		return ctrl.Result{}, err
	}
	if managed, err := r.opts.Manages(ctx, r.client, obj.GetNamespace()); !managed || err != nil {
		return ctrl.Result{}, err
	}
	if r.kind.HandledElsewhere != nil && r.kind.HandledElsewhere(obj) {
		return ctrl.Result{}, nil
	}
	job := r.kind.Adapt(obj)
	queue := QueueName(obj, r.opts)
	wl, err := r.workloadOf(ctx, obj)
	if err != nil || (queue == "" && wl == nil) {
		return ctrl.Result{}, err
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("queue", queue))

	if wl != nil && !wl.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.releaseDeleted(ctx, job, wl)
	}
	if msg, succeeded, finished := job.Finished(); finished {
		return ctrl.Result{}, r.finish(ctx, job, wl, msg, succeeded)
	}
	if wl != nil && workload.IsFinished(wl) && !job.IsSuspended() && !r.dispatched(obj) {
		// The job runs again after its workload finished (a RayCluster
		// resumed by its user): it needs quota anew.
		log.FromContext(ctx).Info("Replaced the finished workload of a job that runs again", "workload", klog.KObj(wl))
		return ctrl.Result{}, client.IgnoreNotFound(r.client.Delete(ctx, wl))
	}
	if loaded, res, err := r.loadRelated(ctx, job, wl == nil); !loaded {
		return res, err
	}
	if wl == nil && PrebuiltWorkloadName(obj) != "" {
		return r.awaitPrebuilt(ctx, job)
	}
	if wl == nil {
		return r.createWorkload(ctx, job, queue)
	}
	if added, err := r.ensureFinalizer(ctx, wl); added || err != nil {
		return ctrl.Result{}, err
	}
	if updated, err := r.syncWorkload(ctx, job, wl, queue); updated || err != nil {
		return ctrl.Result{}, err
	}
	if wrote, err := r.syncPodFailuresTolerated(ctx, job, wl); wrote || err != nil {
		return ctrl.Result{}, err
	}
	if wrote, err := r.finishDeactivation(ctx, wl); wrote || err != nil {
		return ctrl.Result{}, err
	}
	var untilMaxTime time.Duration
	if workload.HasQuotaReservation(wl) && !workload.IsEvicted(wl) {
		left, deactivated, err := r.enforceMaxExecutionTime(ctx, wl)
		if deactivated || err != nil {
			return ctrl.Result{}, err
		}
		untilMaxTime = left
		switch {
		case !workload.IsActive(wl):
			return ctrl.Result{}, r.evictWith(ctx, wl, musterv1beta1.ReasonInactiveWorkload, "The workload was deactivated (spec.active=false)")
		case !sameAskedRequests(wl.Spec.PodSets, job.PodSets(), wl.Status.Admission):
			// Resized while holding quota (parallelism, autoscaling): it
			// must be admitted again at its new size.
			return ctrl.Result{}, r.evictWith(ctx, wl, musterv1beta1.ReasonJobChanged, "The job's pods or requests changed after admission")
		}
	}
	if !workload.IsAdmitted(wl) {
		return ctrl.Result{}, r.stop(ctx, job, wl)
	}
	var res ctrl.Result
	if job.IsSuspended() {
		res, err = r.startOrRetry(ctx, job, wl)
	} else {
		if err := r.shrinkGang(ctx, job, wl); err != nil {
			return ctrl.Result{}, err
		}
		res, err = r.watchPodsReady(ctx, job, wl)
	}
	return requeueBy(res, untilMaxTime), err
}

// workloadOf returns the job's Workload, or nil, and deletes workloads left
// by an earlier job of the same name.
func (r *Reconciler[T]) workloadOf(ctx context.Context, obj client.Object) (*musterv1beta1.Workload, error) {
	if name := PrebuiltWorkloadName(obj); name != "" {
		return r.prebuiltWorkload(ctx, obj, name)
	}
	var wl musterv1beta1.Workload
	key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: WorkloadName(r.kind.GVK.Kind, obj.GetName(), obj.GetUID())}
	err := r.client.Get(ctx, key, &wl)
	if apierrors.IsNotFound(err) {
		return nil, r.deleteOrphanedWorkloads(ctx, obj.GetNamespace(), obj.GetName(), obj.GetUID())
	}
	if err != nil {
		return nil, err
	}
	if !metav1.IsControlledBy(&wl, obj) {
		return nil, fmt.Errorf("workload %s exists but is not controlled by %s %s", key, r.kind.GVK.Kind, obj.GetName())
	}
	return &wl, nil
}

// deleteOrphanedWorkloads deletes the workloads of a job name whose owner is
// gone (any UID but keep), releasing their quota at once rather than when
// the garbage collector gets to them.
func (r *Reconciler[T]) deleteOrphanedWorkloads(ctx context.Context, namespace, name string, keep types.UID) error {
	var wls musterv1beta1.WorkloadList
	if err := r.client.List(ctx, &wls, client.InNamespace(namespace),
		client.MatchingFields{OwnerIndex: OwnerIndexKey(r.kind.GVK, name)}); err != nil {
		return err
	}
	for i := range wls.Items {
		wl := &wls.Items[i]
		if ref := metav1.GetControllerOf(wl); ref != nil && ref.UID == keep {
			continue
		}
		if err := r.client.Delete(ctx, wl); client.IgnoreNotFound(err) != nil {
			return err
		}
		// The job is gone, and its pods with it: the quota is free.
		if err := r.removeFinalizer(ctx, wl); err != nil {
			return err
		}
		log.FromContext(ctx).Info("Deleted workload of a deleted job", "workload", klog.KObj(wl))
	}
	return nil
}

// loadRelated loads the objects a kind's pod sets are read from (a
// TrainJob's runtime), reporting whether the job can go on. One that is
// missing is said on the job, where the user looks for a job without a
// Workload, and tried again shortly, as a missing priority class is; a
// job without a Workload is suspended first, so that it cannot start
// when the object appears.
func (r *Reconciler[T]) loadRelated(ctx context.Context, job GenericJob, noWorkload bool) (bool, ctrl.Result, error) {
	l, ok := job.(JobWithRelatedObjects)
	if !ok {
		return true, ctrl.Result{}, nil
	}
	err := l.LoadRelated(ctx, r.client)
	switch {
	case err == nil:
		return true, ctrl.Result{}, nil
	case apierrors.IsNotFound(err):
		if noWorkload && !job.IsSuspended() && !stoppedByDeletion(job) {
			return false, ctrl.Result{}, r.suspendUngated(ctx, job)
		}
		r.recorder.Eventf(job.Object(), nil, corev1.EventTypeWarning, ReasonWorkloadComposeFailed, "Create", "Cannot read its pod sets: %v", err)
		log.FromContext(ctx).Info("Cannot read the job's pod sets yet", "err", err.Error())
		return false, ctrl.Result{RequeueAfter: composeRetry}, nil
	}
	return false, ctrl.Result{}, err
}

// createWorkload suspends a job that runs without quota (the webhook was
// down or the job predates Muster), then creates its Workload.
func (r *Reconciler[T]) createWorkload(ctx context.Context, job GenericJob, queue string) (ctrl.Result, error) {
	obj := job.Object()
	if !job.IsSuspended() && stoppedByDeletion(job) {
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, ReasonNotGated, "Create",
			"Runs outside quota: it was created without Muster's gate (was the webhook unreachable?) and cannot be held back once it exists")
		log.FromContext(ctx).Info("Left alone a job that runs without quota and cannot be suspended")
		return ctrl.Result{}, nil
	}
	if !job.IsSuspended() {
		if err := r.suspendUngated(ctx, job); err != nil {
			return ctrl.Result{}, err
		}
	}
	wl, err := r.newWorkload(ctx, job, queue)
	if err != nil {
		// Said on the job, which is all the user has without a Workload.
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, ReasonWorkloadComposeFailed, "Create", "Cannot create its Workload: %v", err)
		if apierrors.IsNotFound(err) {
			log.FromContext(ctx).Info("Cannot create the job's workload yet", "err", err.Error())
			return ctrl.Result{RequeueAfter: composeRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if err := r.client.Create(ctx, wl); err != nil {
		return ctrl.Result{}, client.IgnoreAlreadyExists(err)
	}
	r.recorder.Eventf(obj, wl, corev1.EventTypeNormal, ReasonCreatedWorkload, "Create", "Created Workload %s", wl.Name)
	log.FromContext(ctx).Info("Created workload", "workload", klog.KObj(wl))
	return ctrl.Result{}, nil
}

// suspendUngated suspends a job found running without quota.
func (r *Reconciler[T]) suspendUngated(ctx context.Context, job GenericJob) error {
	job.Suspend()
	if err := r.client.Update(ctx, job.Object()); err != nil {
		return err
	}
	r.recorder.Eventf(job.Object(), nil, corev1.EventTypeNormal, ReasonSuspended, "Suspend", "Suspended: the job has no quota reservation")
	log.FromContext(ctx).Info("Suspended a job that was running without quota")
	return nil
}

func (r *Reconciler[T]) newWorkload(ctx context.Context, job GenericJob, queue string) (*musterv1beta1.Workload, error) {
	obj := job.Object()
	podSets, err := r.podSetsOf(ctx, job)
	if err != nil {
		return nil, err
	}
	wl := &musterv1beta1.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Name:      WorkloadName(r.kind.GVK.Kind, obj.GetName(), obj.GetUID()),
			Namespace: obj.GetNamespace(),
		},
		Spec: musterv1beta1.WorkloadSpec{
			PodSets:   podSets,
			QueueName: musterv1beta1.LocalQueueName(queue),
		},
	}
	// A malformed bound is refused by the webhook; one that got past it
	// (webhook down) is ignored rather than blocking the job.
	wl.Spec.MaximumExecutionTimeSeconds, _ = maxExecutionTime(obj, r.opts)
	controllerutil.AddFinalizer(wl, musterv1beta1.ResourceInUseFinalizer)
	wl.Annotations = map[string]string{}
	if created := obj.GetCreationTimestamp(); !created.IsZero() {
		wl.Annotations[musterv1beta1.JobCreatedAtAnnotation] = created.UTC().Format(time.RFC3339)
	}
	if v, ok := podFailuresTolerated(job); ok {
		wl.Annotations[musterv1beta1.PodFailuresToleratedAnnotation] = v
	}
	if err := r.setPriority(ctx, obj, wl); err != nil {
		return nil, err
	}
	if err := controllerutil.SetControllerReference(obj, wl, r.client.Scheme()); err != nil {
		return nil, err
	}
	return wl, nil
}

// syncWorkload carries a pending job's changes (queue, pod set sizes or
// requests) to its Workload. A workload holding quota is left alone: the
// validating webhooks keep its job from changing.
func (r *Reconciler[T]) syncWorkload(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload, queue string) (bool, error) {
	if wl.Status.Admission != nil || !job.IsSuspended() {
		return false, nil
	}
	podSets, err := r.podSetsOf(ctx, job)
	if err != nil {
		return false, err
	}
	bound, _ := maxExecutionTime(job.Object(), r.opts)
	if string(wl.Spec.QueueName) == queue && samePodSets(wl.Spec.PodSets, podSets) && ptr.Equal(wl.Spec.MaximumExecutionTimeSeconds, bound) {
		return false, nil
	}
	wl.Spec.QueueName = musterv1beta1.LocalQueueName(queue)
	wl.Spec.PodSets = podSets
	wl.Spec.MaximumExecutionTimeSeconds = bound
	if err := r.client.Update(ctx, wl); err != nil {
		return false, err
	}
	log.FromContext(ctx).Info("Updated workload to match its job", "workload", klog.KObj(wl))
	return true, nil
}

// podFailuresTolerated is the job's pod failure budget as the Workload
// annotation writes it; ok is false when it has none.
func podFailuresTolerated(job GenericJob) (string, bool) {
	b, ok := job.(JobWithPodFailureBudget)
	if !ok {
		return "", false
	}
	n, ok := b.PodFailuresTolerated()
	if !ok {
		return "", false
	}
	return strconv.Itoa(int(n)), true
}

// syncPodFailuresTolerated keeps the Workload's record of how many more pod
// failures its job tolerates (the scheduler reads it when a node fails),
// reporting whether it wrote. It changes only when pods fail.
func (r *Reconciler[T]) syncPodFailuresTolerated(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload) (bool, error) {
	want, ok := podFailuresTolerated(job)
	have, had := wl.Annotations[musterv1beta1.PodFailuresToleratedAnnotation]
	if ok == had && want == have {
		return false, nil
	}
	orig := wl.DeepCopy()
	if ok {
		metav1.SetMetaDataAnnotation(&wl.ObjectMeta, musterv1beta1.PodFailuresToleratedAnnotation, want)
	} else {
		delete(wl.Annotations, musterv1beta1.PodFailuresToleratedAnnotation)
	}
	return true, r.client.Patch(ctx, wl, client.MergeFrom(orig))
}

// shrinkGang lowers a running job's gang minimum once fewer of its pods
// remain to run than were admitted.
func (r *Reconciler[T]) shrinkGang(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload) error {
	w, ok := job.(JobWithPodsToRun)
	if r.opts.Gang == nil || !ok || GangProviderOf(job) == "" || wl.Status.Admission == nil {
		return nil
	}
	toRun := w.PodsToRun()
	for i, psa := range wl.Status.Admission.PodSetAssignments {
		if i < len(toRun) && psa.Count != nil && toRun[i] < *psa.Count {
			return r.opts.Gang.Shrink(ctx, job, r.kind.Framework, wl, toRun)
		}
	}
	return nil
}

// startOrRetry starts the job, or looks again later when its start must
// wait, or evicts it when its gang scheduler's API is gone (the queue is
// inactive meanwhile, and admits it again once the API is back).
func (r *Reconciler[T]) startOrRetry(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload) (ctrl.Result, error) {
	err := r.start(ctx, job, wl)
	var wait *RetryAfterError
	switch {
	case errors.As(err, &wait):
		log.FromContext(ctx).V(2).Info("Start waits", "reason", wait.Reason, "after", wait.After)
		return ctrl.Result{RequeueAfter: wait.After}, nil
	case meta.IsNoMatchError(err):
		return ctrl.Result{}, r.evictWith(ctx, wl, musterv1beta1.ReasonGangSchedulerNotFound,
			fmt.Sprintf("The job could not be handed to its gang scheduler: %v", err))
	}
	return ctrl.Result{}, err
}

// start injects the admitted flavors' placement and unsuspends the job.
func (r *Reconciler[T]) start(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload) error {
	infos, err := r.admittedPodSetInfos(ctx, wl)
	if err != nil {
		return err
	}
	if r.opts.Gang != nil {
		// The pod groups exist before the job makes its first pod.
		if err := r.opts.Gang.Start(ctx, job, r.kind.Framework, wl, infos); err != nil {
			return fmt.Errorf("handing the job to its gang scheduler: %w", err)
		}
	}
	if err := job.RunWithPodSetsInfo(infos); err != nil {
		if IsPlacementConflict(err) {
			// Retrying cannot help while the job holds quota it cannot use.
			return r.failToStart(ctx, job, wl, err)
		}
		return fmt.Errorf("injecting the placement of ClusterQueue %s: %w", wl.Status.Admission.ClusterQueue, err)
	}
	obj := job.Object()
	if err := r.client.Update(ctx, obj); err != nil {
		return err
	}
	msg := fmt.Sprintf("Admitted by ClusterQueue %s", wl.Status.Admission.ClusterQueue)
	if p := GangProviderOf(job); p != "" {
		msg += fmt.Sprintf("; its pods are bound by gang scheduler %s", p)
	}
	r.recorder.Eventf(obj, wl, corev1.EventTypeNormal, ReasonStarted, "Start", "%s", msg)
	log.FromContext(ctx).Info("Started job", "clusterQueue", klog.KRef("", string(wl.Status.Admission.ClusterQueue)))
	return nil
}

// stop suspends a job whose workload holds no quota (or was evicted),
// restores its original placement, and then releases an evicted workload's
// quota so it is queued again. Suspending and restoring are separate writes:
// the API server accepts a new pod placement only on a job that is already
// suspended and whose startTime is cleared.
func (r *Reconciler[T]) stop(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload) error {
	if wrote, err := r.suspendAndRestore(ctx, job, wl); wrote || err != nil {
		return err
	}
	// A reservation waiting for its admission checks is kept: its job
	// starts once they pass.
	if workload.IsEvicting(wl) && !job.IsActive() {
		return r.requeue(ctx, wl)
	}
	return nil
}

// suspendAndRestore takes a job one write towards stopped with its
// original placement (suspended, status cleaned up, placement restored),
// reporting whether it wrote; false means it is there.
func (r *Reconciler[T]) suspendAndRestore(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload) (bool, error) {
	obj := job.Object()
	if !job.IsSuspended() {
		return true, r.suspend(ctx, job, wl)
	}
	if cleanup, ok := job.(JobWithStopCleanup); ok && cleanup.ClearStatusOnStop() {
		return true, r.client.Status().Update(ctx, obj)
	}
	if lock, ok := job.(JobWithTemplateLock); ok && lock.TemplateLocked() {
		// The job's status changes as its pods go: reconciled again then.
		log.FromContext(ctx).V(2).Info("Waiting for the stopped job's pods to go before restoring its placement")
		return false, nil
	}
	if err := r.stopGang(ctx, job, wl); err != nil {
		return false, err
	}
	if job.RestorePodSetsInfo(originalPodSetInfos(wl)) {
		return true, r.client.Update(ctx, obj)
	}
	return false, nil
}

// suspend stops a running job; the next reconcile restores its placement.
// A kind that cannot be suspended is deleted instead.
func (r *Reconciler[T]) suspend(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload) error {
	obj := job.Object()
	if stoppedByDeletion(job) {
		if !obj.GetDeletionTimestamp().IsZero() {
			return nil // going; its deletion releases the workload
		}
		uid := obj.GetUID()
		if err := r.client.Delete(ctx, obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return err
		}
	} else {
		job.Suspend()
		if err := r.client.Update(ctx, obj); err != nil {
			return err
		}
	}
	msg := "Not admitted by a ClusterQueue"
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
		msg = "Evicted: " + c.Message
	}
	r.recorder.Eventf(obj, wl, corev1.EventTypeNormal, ReasonStopped, "Stop", msg)
	log.FromContext(ctx).Info("Stopped job", "reason", msg)
	return nil
}

// evictWith evicts an admitted workload that no longer matches what was
// admitted (deactivated, resized): its job is stopped and its quota
// released; a still-active one is queued again as it now is.
func (r *Reconciler[T]) evictWith(ctx context.Context, wl *musterv1beta1.Workload, reason, msg string) error {
	return EvictWorkload(ctx, r.client, r.opts.Clock.Now(), wl, reason, msg)
}

// EvictWorkload evicts an admitted workload for a reason its job
// reconciler found (evictWith), counting the eviction.
func EvictWorkload(ctx context.Context, c client.Client, now time.Time, wl *musterv1beta1.Workload, reason, msg string) error {
	orig := wl.DeepCopy()
	wrote, err := wlstatus.Patch(ctx, c, wl, func(wl *musterv1beta1.Workload) bool { return workload.Evict(wl, reason, msg, now) })
	if !wrote || err != nil {
		return err
	}
	reportEviction(orig, reason, now)
	log.FromContext(ctx).Info("Evicted workload", "workload", klog.KObj(wl), "reason", reason)
	return nil
}

// reportEviction counts an eviction a job reconciler wrote in
// muster_evicted_workloads_total, under the ClusterQueue of the admission
// it ended, as the scheduler counts its own. wl is the workload as it was
// before the write.
func reportEviction(wl *musterv1beta1.Workload, reason string, now time.Time) {
	if wl.Status.Admission != nil {
		metrics.ReportEviction(wl, reason, "", now)
	}
}

// finish marks the workload Finished, which releases its quota.
func (r *Reconciler[T]) finish(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload, msg string, succeeded bool) error {
	if wl == nil || workload.IsFinished(wl) {
		return nil
	}
	reason := musterv1beta1.ReasonSucceeded
	if !succeeded {
		reason = musterv1beta1.ReasonFailed
	}
	// The pod groups go first: once the workload is Finished, nothing
	// here looks at it again.
	if err := r.stopGang(ctx, job, wl); err != nil {
		return err
	}
	if err := FinishWorkload(ctx, r.client, r.opts.Clock.Now(), wl, reason, msg); err != nil {
		return err
	}
	r.recorder.Eventf(wl, job.Object(), corev1.EventTypeNormal, ReasonFinished, "Finish", "Job finished: %s", reason)
	r.recorder.Eventf(job.Object(), wl, corev1.EventTypeNormal, ReasonFinished, "Finish", "Workload %s finished, quota released", wl.Name)
	log.FromContext(ctx).Info("Finished workload", "workload", klog.KObj(wl), "reason", reason)
	return nil
}

// failToStart finishes an admitted workload whose job cannot be started
// with its placement (the job's node selector contradicts its flavor's node
// labels, edited after admission): the workload is Finished with reason
// FailedToStart, which releases its quota, and the job stays suspended.
func (r *Reconciler[T]) failToStart(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload, cause error) error {
	msg := fmt.Sprintf("The job cannot start in ClusterQueue %s: %v", wl.Status.Admission.ClusterQueue, cause)
	if err := r.stopGang(ctx, job, wl); err != nil {
		return err
	}
	if err := FinishWorkload(ctx, r.client, r.opts.Clock.Now(), wl, musterv1beta1.ReasonFailedToStart, msg); err != nil {
		return err
	}
	r.recorder.Eventf(job.Object(), wl, corev1.EventTypeWarning, musterv1beta1.ReasonFailedToStart, "Start", msg)
	r.recorder.Eventf(wl, job.Object(), corev1.EventTypeWarning, musterv1beta1.ReasonFailedToStart, "Start", msg)
	log.FromContext(ctx).Info("Finished a workload whose job cannot start", "workload", klog.KObj(wl), "error", cause.Error())
	return nil
}

// stopGang deletes the pod groups of a stopped or finished job, under
// the gang scheduler its pod templates say it was handed to.
func (r *Reconciler[T]) stopGang(ctx context.Context, job GenericJob, wl *musterv1beta1.Workload) error {
	if r.opts.Gang == nil {
		return nil
	}
	return r.opts.Gang.Stop(ctx, wl, GangProviderOf(job))
}

// requeue releases an evicted workload's quota: its job is stopped, so the
// workload goes back to its queue.
func (r *Reconciler[T]) requeue(ctx context.Context, wl *musterv1beta1.Workload) error {
	return RequeueWorkload(ctx, r.client, r.opts.Clock.Now(), wl)
}

// RequeueWorkload releases the quota of an evicted workload whose job is
// stopped: it goes back to its queue.
func RequeueWorkload(ctx context.Context, c client.Client, now time.Time, wl *musterv1beta1.Workload) error {
	_, err := wlstatus.Patch(ctx, c, wl, func(wl *musterv1beta1.Workload) bool { return workload.Requeue(wl, now) })
	return err
}

// FinishWorkload marks a workload Finished with a reason, which releases
// its quota, counts it, and lets the Workload go.
func FinishWorkload(ctx context.Context, c client.Client, now time.Time, wl *musterv1beta1.Workload, reason, msg string) error {
	wrote, err := wlstatus.Patch(ctx, c, wl, func(wl *musterv1beta1.Workload) bool { return workload.Finish(wl, reason, msg, now) })
	if err != nil {
		return err
	}
	if wrote {
		metrics.ReportFinished(metrics.WorkloadOf(wl))
	}
	return RemoveFinalizer(ctx, c, wl)
}
