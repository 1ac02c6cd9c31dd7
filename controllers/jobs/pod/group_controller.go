package pod

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/internal/workload"
)

// Event reasons on the Pods of a group.
const (
	// ReasonInvalidGroup is a group whose Pods disagree (size, queue).
	ReasonInvalidGroup = "InvalidPodGroup"
	// ReasonExcessPod is a Pod its admitted group has no room for.
	ReasonExcessPod = "ExcessPod"
)

// GroupWorkloadLabel on a Workload names the pod group it admits.
const GroupWorkloadLabel = "muster.dev/pod-group"

// groupIndex indexes queued Pods by their group.
const groupIndex = "muster.dev/pod-group"

// Integration is the Pod kind with the reconciler of its groups beside
// the generic one of single Pods.
func Integration() jobframework.Integration {
	i := Kind.Integration()
	single := i.SetupReconciler
	i.SetupReconciler = func(mgr ctrl.Manager, opts jobframework.Options) error {
		if err := single(mgr, opts); err != nil {
			return err
		}
		return NewGroupReconciler(mgr.GetClient(), mgr.GetEventRecorder("muster-podgroup-controller"), opts).SetupWithManager(mgr)
	}
	return i
}

// GroupReconciler gives each pod group one Workload, ungates its Pods
// when it is admitted, deletes them when it is evicted, and finishes it
// when they are done. It reads the Pods from the cache, by group.
type GroupReconciler struct {
	client   client.Client
	recorder events.EventRecorder
	opts     jobframework.Options
}

// NewGroupReconciler returns the pod group reconciler.
func NewGroupReconciler(c client.Client, rec events.EventRecorder, opts jobframework.Options) *GroupReconciler {
	return &GroupReconciler{client: c, recorder: rec, opts: opts}
}

// SetupWithManager indexes queued Pods by group and watches them and the
// groups' Workloads.
func (r *GroupReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, groupIndex, r.groupKey); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("podgroup").
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.podGroup)).
		Watches(&musterv1beta1.Workload{}, handler.EnqueueRequestsFromMapFunc(workloadGroup),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[GroupWorkloadLabel] != "" }))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
}

// groupKey is a Pod's group, if it is queued in one.
func (r *GroupReconciler) groupKey(o client.Object) []string {
	p := o.(*corev1.Pod)
	if name := GroupName(p); name != "" && jobframework.QueueName(p, r.opts) != "" {
		return []string{name}
	}
	return nil
}

func (r *GroupReconciler) podGroup(_ context.Context, o client.Object) []reconcile.Request {
	names := r.groupKey(o)
	if len(names) == 0 {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: names[0]}}}
}

func workloadGroup(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetLabels()[GroupWorkloadLabel]}}}
}

// Reconcile takes one pod group one step towards what its Workload says.
func (r *GroupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return conflict.Requeue(ctx, ctrl.Result{}, r.reconcile(ctx, req))
}

func (r *GroupReconciler) reconcile(ctx context.Context, req ctrl.Request) error {
	if managed, err := r.opts.Manages(ctx, r.client, req.Namespace); !managed || err != nil {
		return err
	}
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(req.Namespace), client.MatchingFields{groupIndex: req.Name}); err != nil {
		return err
	}
	g := newGroup(req.Name, pods.Items)
	wl, err := r.workloadOf(ctx, req.NamespacedName)
	if err != nil {
		return err
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("podGroup", klog.KRef(req.Namespace, req.Name)))
	switch {
	case wl != nil && !wl.DeletionTimestamp.IsZero():
		return r.releaseDeleted(ctx, g, wl)
	case len(g.pods) == 0:
		return r.deleteWorkload(ctx, wl)
	case wl != nil && workload.IsFinished(wl):
		return nil
	}
	total, err := g.total()
	if err != nil {
		r.warnAll(g, wl, ReasonInvalidGroup, err.Error())
		return nil
	}
	if msg, succeeded, finished := g.finished(total); finished {
		return r.finish(ctx, wl, msg, succeeded)
	}
	if wl == nil {
		return r.createWorkload(ctx, g, total)
	}
	return r.follow(ctx, g, wl, total)
}

// follow takes a group with a Workload towards it: wait (and give up a
// pending Workload whose group shrank), run, or stop.
func (r *GroupReconciler) follow(ctx context.Context, g *group, wl *musterv1beta1.Workload, total int32) error {
	if !controllerutil.ContainsFinalizer(wl, musterv1beta1.ResourceInUseFinalizer) {
		orig := wl.DeepCopy()
		controllerutil.AddFinalizer(wl, musterv1beta1.ResourceInUseFinalizer)
		return r.client.Patch(ctx, wl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	}
	// Deactivated by an eviction (an admission check's rejection): inactive
	// before its quota is released, so it is not queued again.
	if wrote, err := jobframework.FinishDeactivation(ctx, r.client, wl); wrote || err != nil {
		return err
	}
	switch {
	case !workload.HasQuotaReservation(wl):
		if waiting := g.waiting(); int32(len(waiting)) < total || !fits(waiting, wl) {
			// A Pod went, or came in another shape, before admission: the
			// group waits to be whole again, as it did first.
			log.FromContext(ctx).Info("Deleted the pending workload of a pod group that changed", "workload", klog.KObj(wl))
			return r.deleteWorkload(ctx, wl)
		}
		return nil
	case len(g.running()) == 0 && !fits(g.waiting(), wl):
		// Its Pods were all replaced by Pods of another shape (a rolling
		// update of their template): its quota was for the old ones.
		log.FromContext(ctx).Info("Deleted the workload of a pod group whose Pods changed shape", "workload", klog.KObj(wl))
		return r.deleteWorkload(ctx, wl)
	case !workload.IsActive(wl) && !workload.IsEvicted(wl):
		return jobframework.EvictWorkload(ctx, r.client, r.opts.Clock.Now(), wl, musterv1beta1.ReasonInactiveWorkload,
			"The workload was deactivated (spec.active=false)")
	case !workload.IsAdmitted(wl):
		return r.stop(ctx, g, wl)
	}
	return r.ungate(ctx, g, wl)
}

func (r *GroupReconciler) workloadOf(ctx context.Context, key types.NamespacedName) (*musterv1beta1.Workload, error) {
	var wl musterv1beta1.Workload
	if err := r.client.Get(ctx, key, &wl); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if wl.Labels[GroupWorkloadLabel] != key.Name {
		return nil, fmt.Errorf("workload %s exists but does not admit pod group %s", key, key.Name)
	}
	return &wl, nil
}

// createWorkload makes the group's Workload once all its Pods wait at the
// gate. A Pod that got past a webhook that was not called runs outside
// quota, as a single Pod does; the others wait for it to be replaced.
func (r *GroupReconciler) createWorkload(ctx context.Context, g *group, total int32) error {
	for _, p := range g.running() {
		r.recorder.Eventf(p, nil, corev1.EventTypeWarning, jobframework.ReasonNotGated, "Create",
			"Runs outside quota: it was created without Muster's gate (was the webhook unreachable?); its group waits for %d gated Pods", total)
	}
	waiting := g.waiting()
	if int32(len(waiting)) < total {
		log.FromContext(ctx).V(2).Info("Pod group waits for its Pods", "have", len(waiting), "want", total)
		return nil
	}
	queue, err := sameQueue(waiting[:total], r.opts)
	if err != nil {
		r.warnAll(g, nil, ReasonInvalidGroup, err.Error())
		return nil
	}
	wl, err := r.newWorkload(ctx, g, waiting[:total], queue)
	if err != nil {
		r.warnAll(g, nil, jobframework.ReasonWorkloadComposeFailed, "Cannot create its Workload: "+err.Error())
		if apierrors.IsNotFound(err) {
			return nil // a WorkloadPriorityClass created later brings no event: the next Pod change does
		}
		return err
	}
	if err := r.client.Create(ctx, wl); err != nil {
		return client.IgnoreAlreadyExists(err)
	}
	for _, p := range waiting[:total] {
		r.recorder.Eventf(p, wl, corev1.EventTypeNormal, jobframework.ReasonCreatedWorkload, "Create", "Created Workload %s for pod group %s", wl.Name, g.name)
	}
	log.FromContext(ctx).Info("Created workload", "workload", klog.KObj(wl))
	return nil
}

func sameQueue(pods []*corev1.Pod, opts jobframework.Options) (string, error) {
	queue := jobframework.QueueName(pods[0], opts)
	for _, p := range pods[1:] {
		if q := jobframework.QueueName(p, opts); q != queue {
			return "", fmt.Errorf("the Pods of one group name different queues (%s and %s)", queue, q)
		}
	}
	return queue, nil
}

func (r *GroupReconciler) newWorkload(ctx context.Context, g *group, pods []*corev1.Pod, queue string) (*musterv1beta1.Workload, error) {
	sets, err := jobframework.EffectivePodSets(ctx, r.client, pods[0].Namespace, podSets(pods), "")
	if err != nil {
		return nil, err
	}
	wl := &musterv1beta1.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Name:        g.name,
			Namespace:   pods[0].Namespace,
			Labels:      map[string]string{GroupWorkloadLabel: g.name},
			Annotations: map[string]string{musterv1beta1.JobCreatedAtAnnotation: pods[0].CreationTimestamp.UTC().Format(time.RFC3339)},
			Finalizers:  []string{musterv1beta1.ResourceInUseFinalizer},
		},
		Spec: musterv1beta1.WorkloadSpec{PodSets: sets, QueueName: musterv1beta1.LocalQueueName(queue)},
	}
	if err := jobframework.SetPriority(ctx, r.client, r.opts, pods[0].Labels, wl); err != nil {
		return nil, err
	}
	return wl, nil
}

// ungate starts the admitted group's waiting Pods, each with its pod set's
// placement, as many as its pod set has room for: a replacement for a
// failed Pod joins, a Pod beyond the group's size waits.
func (r *GroupReconciler) ungate(ctx context.Context, g *group, wl *musterv1beta1.Workload) error {
	if g.unretriableFailed() {
		return nil // it ends when its running Pods do
	}
	infos, err := jobframework.AdmittedPlacement(ctx, r.client, wl)
	if err != nil {
		return err
	}
	room := map[string]int32{}
	for _, info := range infos {
		room[info.Name] = info.Count
	}
	for _, p := range g.running() {
		room[roleHash(p)]--
	}
	for _, p := range g.waiting() {
		set := roleHash(p)
		if room[set] <= 0 {
			r.recorder.Eventf(p, wl, corev1.EventTypeWarning, ReasonExcessPod, "Start",
				"Waits: pod set %s of its admitted group %s runs all the Pods it was admitted with", set, g.name)
			continue
		}
		if err := r.start(ctx, p, wl, infos, set); err != nil {
			return err
		}
		room[set]--
	}
	return nil
}

func (r *GroupReconciler) start(ctx context.Context, p *corev1.Pod, wl *musterv1beta1.Workload, infos []jobframework.PodSetInfo, set string) error {
	for _, info := range infos {
		if info.Name != set {
			continue
		}
		if err := (*Pod)(p).place(info); err != nil {
			r.recorder.Eventf(p, wl, corev1.EventTypeWarning, musterv1beta1.ReasonFailedToStart, "Start", "Cannot start: %v", err)
			return nil
		}
		if err := r.client.Update(ctx, p); err != nil {
			return err
		}
		r.recorder.Eventf(p, wl, corev1.EventTypeNormal, jobframework.ReasonStarted, "Start", "Admitted by ClusterQueue %s", wl.Status.Admission.ClusterQueue)
		log.FromContext(ctx).V(2).Info("Started a Pod of the group", "pod", klog.KObj(p))
	}
	return nil
}

// stop deletes the running Pods of a group whose Workload holds no
// admission (evicted, preempted) and, once they are gone, releases its
// quota: the group queues again, its waiting Pods with it, and whoever
// made the deleted Pods makes them again.
func (r *GroupReconciler) stop(ctx context.Context, g *group, wl *musterv1beta1.Workload) error {
	running := g.running()
	if len(running) == 0 {
		// A reservation waiting for its admission checks is kept.
		if workload.IsEvicting(wl) {
			return jobframework.RequeueWorkload(ctx, r.client, r.opts.Clock.Now(), wl)
		}
		return nil
	}
	for _, p := range running {
		if err := r.deletePod(ctx, p, wl); err != nil {
			return err
		}
	}
	return nil
}

func (r *GroupReconciler) deletePod(ctx context.Context, p *corev1.Pod, wl *musterv1beta1.Workload) error {
	if !p.DeletionTimestamp.IsZero() {
		return nil
	}
	uid := p.UID
	if err := r.client.Delete(ctx, p, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return err
	}
	r.recorder.Eventf(p, wl, corev1.EventTypeNormal, jobframework.ReasonStopped, "Stop", "Deleted: its group's Workload %s was evicted", wl.Name)
	return nil
}

// releaseDeleted lets the Workload of a group go once none of its Pods
// runs on its quota any more.
func (r *GroupReconciler) releaseDeleted(ctx context.Context, g *group, wl *musterv1beta1.Workload) error {
	if workload.HoldsQuota(wl) {
		for _, p := range g.running() {
			if err := r.deletePod(ctx, p, wl); err != nil {
				return err
			}
		}
		if len(g.running()) > 0 {
			return nil
		}
	}
	return jobframework.RemoveFinalizer(ctx, r.client, wl)
}

// deleteWorkload deletes the Workload of a group whose Pods are all gone,
// which releases its quota.
func (r *GroupReconciler) deleteWorkload(ctx context.Context, wl *musterv1beta1.Workload) error {
	if wl == nil {
		return nil
	}
	if err := r.client.Delete(ctx, wl); client.IgnoreNotFound(err) != nil {
		return err
	}
	return jobframework.RemoveFinalizer(ctx, r.client, wl)
}

func (r *GroupReconciler) finish(ctx context.Context, wl *musterv1beta1.Workload, msg string, succeeded bool) error {
	if wl == nil {
		return nil
	}
	reason := musterv1beta1.ReasonSucceeded
	if !succeeded {
		reason = musterv1beta1.ReasonFailed
	}
	if err := jobframework.FinishWorkload(ctx, r.client, r.opts.Clock.Now(), wl, reason, msg); err != nil {
		return err
	}
	r.recorder.Eventf(wl, nil, corev1.EventTypeNormal, jobframework.ReasonFinished, "Finish", "Pod group finished: %s", msg)
	log.FromContext(ctx).Info("Finished workload", "workload", klog.KObj(wl), "reason", reason)
	return nil
}

// warnAll says what is wrong with a group on each of its Pods, where its
// user looks (and on its Workload, if it has one).
func (r *GroupReconciler) warnAll(g *group, wl *musterv1beta1.Workload, reason, msg string) {
	for i := range g.pods {
		r.recorder.Eventf(&g.pods[i], nil, corev1.EventTypeWarning, reason, "Admit", "%s", msg)
	}
	if wl != nil {
		r.recorder.Eventf(wl, nil, corev1.EventTypeWarning, reason, "Admit", "%s", msg)
	}
}
