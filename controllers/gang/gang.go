// Package gang hands admitted jobs to a gang scheduler, so that the pods
// of a job Muster admitted whole are also bound whole: Kubernetes' own
// (a scheduling.k8s.io Workload and PodGroups, kube-scheduler's
// GangScheduling plugin), Volcano, scheduler-plugins' coscheduling or KAI.
// Before a job is unsuspended it creates the pod groups the ClusterQueue's
// gang scheduler needs and says what the job's pod templates get to point
// their pods at them; the pod webhook sets the pod fields a Job's template
// cannot change (schedulerName, schedulingGroup); once the job is stopped
// or finished it deletes them. docs/gang-scheduling.md says which to pick.
package gang

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=workloads;podgroups,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=scheduling.volcano.sh,resources=podgroups,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=scheduling.x-k8s.io,resources=podgroups,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=muster.dev,resources=clusterqueues,verbs=get;list;watch

// Config is the manager's gang scheduling configuration, defaulted.
type Config struct {
	// Default is the provider of ClusterQueues that name none.
	Default musterv1beta1.GangSchedulerProvider
	// Queue is the gang scheduler's queue when nothing else names one.
	Queue string
	// SchedulerNames is the schedulerName each provider gives the pods.
	SchedulerNames map[string]string
	// OperatorPodGroups are the frameworks whose operator makes the pod
	// group itself.
	OperatorPodGroups []string
}

// ConfigFrom is the gang configuration of a defaulted manager configuration.
func ConfigFrom(c *configv1beta1.GangScheduling) Config {
	return Config{
		Default:           musterv1beta1.GangSchedulerProvider(c.Provider),
		Queue:             c.Queue,
		SchedulerNames:    c.SchedulerNames,
		OperatorPodGroups: c.OperatorPodGroups,
	}
}

// HandOff implements jobframework.Gang.
type HandOff struct {
	client client.Client
	cfg    Config
}

var _ jobframework.Gang = (*HandOff)(nil)

// New returns the hand-off over a client of the manager's.
func New(c client.Client, cfg Config) *HandOff { return &HandOff{client: c, cfg: cfg} }

// Group is one admitted workload as its gang scheduler sees it.
type Group struct {
	Workload *musterv1beta1.Workload
	// Job is the job's kind and name, for the Workload API's controllerRef.
	JobGVK  schema.GroupVersionKind
	JobName string
	// Queue is the gang scheduler's queue (Volcano, KAI).
	Queue string
	// SchedulerName is what the pods' schedulerName becomes ("" keeps it).
	SchedulerName string
	// PodSets are the admitted pod sets, in the workload's order.
	PodSets []PodSet
}

// PodSet is one admitted pod set.
type PodSet struct {
	Name  string
	Count int32
	// TopologyKey is the node label of the level the pod set must sit in
	// one domain of, when it asks for one.
	TopologyKey string
	// Requests are the pod set's requests, all its pods together.
	Requests corev1.ResourceList
}

// Pods is how many pods the group admits in all.
func (g *Group) Pods() int32 {
	var n int32
	for _, ps := range g.PodSets {
		n += ps.Count
	}
	return n
}

// PodGroups are the objects Muster creates for a group under a provider
// (none for KAI, whose podgrouper makes them).
func PodGroups(p musterv1beta1.GangSchedulerProvider, g *Group) []client.Object {
	if pr := providerOf(p); pr != nil {
		return pr.objects(g)
	}
	return nil
}

// provider is one gang scheduler: the objects it needs and the marks the
// pod templates get.
type provider interface {
	// objects are the pod groups to create for the group (none when the
	// scheduler's own controller makes them).
	objects(g *Group) []client.Object
	// marks are the labels and annotations a pod set's pods get.
	marks(g *Group, podSet string) *jobframework.GangInfo
	// names are the objects Stop deletes for a workload.
	names(wl *musterv1beta1.Workload) []client.Object
}

func providerOf(p musterv1beta1.GangSchedulerProvider) provider {
	switch p {
	case musterv1beta1.GangKubeScheduler:
		return kubeScheduler{}
	case musterv1beta1.GangVolcano:
		return volcano{}
	case musterv1beta1.GangCoscheduling:
		return coscheduling{}
	case musterv1beta1.GangKAI:
		return kai{}
	}
	return nil
}

// Start implements jobframework.Gang.
func (h *HandOff) Start(ctx context.Context, job jobframework.GenericJob, framework string, wl *musterv1beta1.Workload, infos []jobframework.PodSetInfo) error {
	name, p, g, err := h.admittedGroup(ctx, job, wl)
	if p == nil || err != nil {
		return err
	}
	operatorMade := h.operatorMakesGroups(framework, name)
	if m, ok := job.(jobframework.JobWithGangMinimum); ok && (name == musterv1beta1.GangKAI || operatorMade) {
		// The operator (or KAI's podgrouper) makes the group from the job.
		queue := ""
		if name == musterv1beta1.GangVolcano {
			queue = g.Queue
		}
		m.SetGangMinimum(g.Pods(), queue)
	}
	if operatorMade {
		// Its operator makes the group and points the pods at it.
		return nil
	}
	for _, obj := range p.objects(g) {
		if err := h.ensure(ctx, wl, obj); err != nil {
			return err
		}
	}
	for i := range infos {
		infos[i].Gang = p.marks(g, infos[i].Name)
	}
	return nil
}

// Shrink implements jobframework.Gang: the pod groups Muster made for the
// workload get the counts the job still runs (never more than admitted);
// the scheduling.k8s.io Workload keeps its template, which is immutable.
// Groups an operator or KAI's podgrouper made are theirs.
func (h *HandOff) Shrink(ctx context.Context, job jobframework.GenericJob, framework string, wl *musterv1beta1.Workload, toRun []int32) error {
	name, p, g, err := h.admittedGroup(ctx, job, wl)
	if p == nil || err != nil || name == musterv1beta1.GangKAI || h.operatorMakesGroups(framework, name) {
		return err
	}
	for i := range g.PodSets {
		if i < len(toRun) {
			g.PodSets[i].Count = min(g.PodSets[i].Count, max(toRun[i], 1))
		}
	}
	for _, obj := range p.objects(g) {
		if kindOf(obj) == "PodGroup" {
			if err := h.resize(ctx, wl, obj); err != nil {
				return err
			}
		}
	}
	return nil
}

// resize brings an existing pod group of the workload to want's counts,
// writing only when they differ.
func (h *HandOff) resize(ctx context.Context, wl *musterv1beta1.Workload, want client.Object) error {
	old := want.DeepCopyObject().(client.Object)
	if err := h.client.Get(ctx, client.ObjectKeyFromObject(want), old); err != nil || !ownedBy(old, wl) {
		return client.IgnoreNotFound(err)
	}
	changed, err := h.patchSpec(ctx, old, want)
	if changed && err == nil {
		log.FromContext(ctx).V(2).Info("Lowered the gang minimum to the pods the job still runs", "podGroup", klog.KObj(old))
	}
	return err
}

// admittedGroup is the gang scheduler of the workload's ClusterQueue and
// the workload as it sees it; a nil provider when the queue hands its jobs
// to none (or is gone).
func (h *HandOff) admittedGroup(ctx context.Context, job jobframework.GenericJob, wl *musterv1beta1.Workload) (musterv1beta1.GangSchedulerProvider, provider, *Group, error) {
	cq := &musterv1beta1.ClusterQueue{}
	if err := h.client.Get(ctx, client.ObjectKey{Name: string(wl.Status.Admission.ClusterQueue)}, cq); err != nil {
		return "", nil, nil, client.IgnoreNotFound(err)
	}
	name := ProviderOf(cq, h.cfg.Default)
	p := providerOf(name)
	if p == nil {
		return name, nil, nil, nil
	}
	g, err := h.group(job, wl, cq, name)
	return name, p, g, err
}

// operatorMakesGroups reports whether the job's operator creates the pod
// group for this provider itself (training-operator --gang-scheduler-name,
// KubeRay --batch-scheduler): Volcano and coscheduling only.
func (h *HandOff) operatorMakesGroups(framework string, p musterv1beta1.GangSchedulerProvider) bool {
	return (p == musterv1beta1.GangVolcano || p == musterv1beta1.GangCoscheduling) && slices.Contains(h.cfg.OperatorPodGroups, framework)
}

// ProviderOf is a ClusterQueue's gang scheduler, def when it names none.
func ProviderOf(cq *musterv1beta1.ClusterQueue, def musterv1beta1.GangSchedulerProvider) musterv1beta1.GangSchedulerProvider {
	if g := cq.Spec.GangScheduling; g != nil && g.Provider != "" {
		return g.Provider
	}
	return def
}

func (h *HandOff) group(job jobframework.GenericJob, wl *musterv1beta1.Workload, cq *musterv1beta1.ClusterQueue, p musterv1beta1.GangSchedulerProvider) (*Group, error) {
	obj := job.Object()
	gvk, err := apiutil.GVKForObject(obj, h.client.Scheme())
	if err != nil {
		return nil, err
	}
	g := &Group{
		Workload:      wl,
		JobGVK:        gvk,
		JobName:       obj.GetName(),
		Queue:         h.queueOf(obj, cq, p),
		SchedulerName: h.cfg.SchedulerNames[string(p)],
	}
	for i, psa := range wl.Status.Admission.PodSetAssignments {
		ps := PodSet{Name: psa.Name, Requests: psa.ResourceUsage}
		if psa.Count != nil {
			ps.Count = *psa.Count
		}
		if i < len(wl.Spec.PodSets) {
			if tr := wl.Spec.PodSets[i].TopologyRequest; tr != nil && tr.Required != nil {
				ps.TopologyKey = *tr.Required
			}
		}
		g.PodSets = append(g.PodSets, ps)
	}
	return g, nil
}

// queueOf is the gang scheduler's queue: the ClusterQueue's, else the
// job's own label for it, else the configured default.
func (h *HandOff) queueOf(job client.Object, cq *musterv1beta1.ClusterQueue, p musterv1beta1.GangSchedulerProvider) string {
	if g := cq.Spec.GangScheduling; g != nil && g.Queue != "" {
		return g.Queue
	}
	label := map[musterv1beta1.GangSchedulerProvider]string{
		musterv1beta1.GangVolcano: VolcanoQueueLabel,
		musterv1beta1.GangKAI:     KAIQueueLabel,
	}[p]
	if q := job.GetLabels()[label]; label != "" && q != "" {
		return q
	}
	return h.cfg.Queue
}

// ensure creates a pod group owned by the workload, or brings one left by
// an earlier admission of it to this one's counts.
func (h *HandOff) ensure(ctx context.Context, wl *musterv1beta1.Workload, obj client.Object) error {
	if err := controllerutil.SetOwnerReference(wl, obj, h.client.Scheme()); err != nil {
		return err
	}
	err := h.client.Create(ctx, obj)
	if err == nil {
		log.FromContext(ctx).V(2).Info("Created pod group", "kind", kindOf(obj), "podGroup", klog.KObj(obj))
		return nil
	}
	if fallback, ok := withoutTopology(obj, err); ok {
		// kube-scheduler without TopologyAwareWorkloadScheduling forbids
		// topology constraints; Muster placed the pods already.
		return h.ensure(ctx, wl, fallback)
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s %s: %w", kindOf(obj), obj.GetName(), err)
	}
	old := obj.DeepCopyObject().(client.Object)
	if err := h.client.Get(ctx, client.ObjectKeyFromObject(obj), old); err != nil {
		return err
	}
	if !ownedBy(old, wl) || !old.GetDeletionTimestamp().IsZero() {
		// Another workload's (a job deleted and created again under the
		// same name), or going (kube-apiserver's podgroup-protection
		// finalizer holds a PodGroup until its pods are gone): it must go
		// before this one can be made.
		if err := client.IgnoreNotFound(h.client.Delete(ctx, old)); err != nil {
			return err
		}
		return &jobframework.RetryAfterError{After: 2 * time.Second,
			Reason: fmt.Sprintf("%s %s of an earlier admission is being deleted", kindOf(obj), obj.GetName())}
	}
	return h.updateCounts(ctx, old, obj)
}

// Stop implements jobframework.Gang. With no provider (the job was not
// marked: stopped before it started, or its start failed) it is the
// admitting ClusterQueue's.
func (h *HandOff) Stop(ctx context.Context, wl *musterv1beta1.Workload, name musterv1beta1.GangSchedulerProvider) error {
	if name == "" {
		if wl.Status.Admission == nil {
			return nil
		}
		cq := &musterv1beta1.ClusterQueue{}
		if err := h.client.Get(ctx, client.ObjectKey{Name: string(wl.Status.Admission.ClusterQueue)}, cq); err != nil {
			return client.IgnoreNotFound(err)
		}
		name = ProviderOf(cq, h.cfg.Default)
	}
	p := providerOf(name)
	if p == nil {
		return nil
	}
	for _, obj := range p.names(wl) {
		obj.SetNamespace(wl.Namespace)
		err := h.client.Delete(ctx, obj)
		if err == nil {
			log.FromContext(ctx).V(2).Info("Deleted pod group", "kind", kindOf(obj), "podGroup", klog.KObj(obj))
		}
		if err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
			return fmt.Errorf("deleting %s %s: %w", kindOf(obj), obj.GetName(), err)
		}
	}
	return nil
}

// GroupName is a pod group's name: the workload's, with the pod set's when
// given, as a DNS label (a label value names it for coscheduling): names
// too long are cut and end in a hash of the whole.
func GroupName(wl *musterv1beta1.Workload, podSet string) string {
	name := wl.Name
	if podSet != "" {
		name += "-" + podSet
	}
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:54] + "-" + hex.EncodeToString(sum[:])[:8]
}
