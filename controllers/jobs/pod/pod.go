// Package pod adapts a plain Pod to Muster's generic job machinery: one
// Pod that names a queue is one Workload of one pod set. A Pod cannot be
// suspended, so the webhook creates it behind the muster.dev/admission
// scheduling gate, admission removes the gate (adding the flavor's node
// selector and tolerations, which a gated Pod still accepts), and stopping
// it deletes it, as Kueue does with a plain Pod.
package pod

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// The pod webhooks see only the pods that name a queue (an objectSelector
// per queue label, config/webhook/queued_pod_object_selector.yaml): a
// Muster that is down blocks no other pod. They see creations only: the
// updates of a queued Pod (a Job controller's finalizer, say) go through
// while Muster is down. The mutating ones run again after another webhook
// changed the Pod (an operator's that adds the labels naming its group).
// +kubebuilder:webhook:path=/mutate-queued-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mqueuedpod.muster.dev,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded
// +kubebuilder:webhook:path=/mutate-queued-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mqueuedpod-kueue.muster.dev,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded
// +kubebuilder:webhook:path=/validate-queued-pod,mutating=false,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=vqueuedpod.muster.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-queued-pod,mutating=false,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=vqueuedpod-kueue.muster.dev,admissionReviewVersions=v1
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;update;patch;delete

// Kind is the plain Pod for the job framework; controllers/jobs registers
// it. Kueue calls the integration "pod".
var Kind = jobframework.Kind[*corev1.Pod]{
	Framework:   "pod",
	GVK:         corev1.SchemeGroupVersion.WithKind("Pod"),
	AddToScheme: corev1.AddToScheme,
	New:         func() *corev1.Pod { return &corev1.Pod{} },
	Adapt:       func(p *corev1.Pod) jobframework.GenericJob { return (*Pod)(p) },
	// The GVK's path (/mutate--v1-pod) is the gang webhook's.
	WebhookPaths: &jobframework.WebhookPaths{Mutate: "/mutate-queued-pod", Validate: "/validate-queued-pod"},
	// A pod group's Pods are one Workload, the group reconciler's.
	HandledElsewhere: func(p *corev1.Pod) bool { return GroupName(p) != "" },
	// EnabledByDefault stays false: a kind added after the first release
	// is opt-in (docs/job-kinds.md).
}

// Pod is a plain Pod as a GenericJob, with one pod set of one pod.
type Pod corev1.Pod

var (
	_ jobframework.GenericJob           = (*Pod)(nil)
	_ jobframework.JobStoppedByDeletion = (*Pod)(nil)
	_ jobframework.JobWithValidation    = (*Pod)(nil)
	_ jobframework.JobWithDefaults      = (*Pod)(nil)
)

// ValidateQueued refuses a Pod of a pod group that cannot be admitted as
// one: without its group's size, or with a group name no Workload can have.
func (p *Pod) ValidateQueued() field.ErrorList {
	name := GroupName((*corev1.Pod)(p))
	if name == "" {
		return nil
	}
	if sizedBySet((*corev1.Pod)(p)) {
		if _, err := totalCount((*corev1.Pod)(p)); err != nil {
			key := lwsv1.SizeAnnotationKey
			return field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations").Key(key), p.Annotations[key], err.Error())}
		}
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "labels").Key(groupPrefixes[0]+GroupNameLabel), name,
			"names the group's Workload: "+msg))
	}
	if _, err := totalCount((*corev1.Pod)(p)); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(groupPrefixes[0]+GroupTotalCountAnnotation),
			p.Annotations[groupPrefixes[0]+GroupTotalCountAnnotation], err.Error()))
	}
	return errs
}

// podSetName is a Pod's one pod set, as Kueue names it.
const podSetName = "main"

func (p *Pod) Object() client.Object { return (*corev1.Pod)(p) }

func (p *Pod) StoppedByDeletion() {}

// IsSuspended: the Pod waits at the admission gate, not admitted yet. An
// admitted Pod bound for a node of its topology placement keeps the gate
// (with its placement's marks) until the ungater gives it its node.
func (p *Pod) IsSuspended() bool {
	return p.hasAdmissionGate() && p.Annotations[musterv1beta1.WorkloadAnnotation] == ""
}

func (p *Pod) hasAdmissionGate() bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, isAdmissionGate)
}

// Suspend gates the Pod; the API server takes it only on a Pod being
// created (the webhook's), which is the only caller that needs it. A new
// Pod is placed nowhere yet, whatever marks it was copied with.
func (p *Pod) Suspend() {
	delete(p.Annotations, musterv1beta1.WorkloadAnnotation)
	delete(p.Labels, musterv1beta1.PodSetLabel)
	if !p.hasAdmissionGate() {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: musterv1beta1.AdmissionSchedulingGate})
	}
}

// Default records a pod group's Pod's shape as it is created, before its
// admission adds to it; each time the webhook runs, since another webhook
// may have changed the Pod (or named its group) in between.
func (p *Pod) Default() {
	if GroupName((*corev1.Pod)(p)) == "" {
		return
	}
	h := shapeHash((*corev1.Pod)(p))
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[RoleHashAnnotation] = h
}

func isAdmissionGate(g corev1.PodSchedulingGate) bool {
	return g.Name == musterv1beta1.AdmissionSchedulingGate
}

// template is the Pod as its pod set's template: what its requests and
// topology annotations are read from, and where the placement goes.
func (p *Pod) template() *corev1.PodTemplateSpec {
	t := &corev1.PodTemplateSpec{Spec: *p.Spec.DeepCopy()}
	t.Labels, t.Annotations = maps.Clone(p.Labels), maps.Clone(p.Annotations)
	t.Spec.NodeName = ""
	return t
}

func (p *Pod) PodSets() []musterv1beta1.PodSet {
	return []musterv1beta1.PodSet{{Name: podSetName, Count: 1, Template: *p.template()}}
}

// RunWithPodSetsInfo adds the flavor's node selector and tolerations (and
// a topology placement's node) and removes the admission gate. A Pod has
// no gang of its own to hand over.
func (p *Pod) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	if len(infos) != 1 || infos[0].Name != podSetName {
		return fmt.Errorf("a Pod has one pod set, %q, not %d named %v", podSetName, len(infos), podSetNames(infos))
	}
	return p.place(infos[0])
}

// place adds a pod set's placement to the gated Pod and removes its gate.
// A Pod the ungater sends to its node keeps the admission gate for the
// ungater to lift: a created Pod cannot take the topology gate.
func (p *Pod) place(info jobframework.PodSetInfo) error {
	info.Gang = nil
	toNode := info.Topology != nil && info.Topology.Gate
	if toNode {
		ti := *info.Topology
		ti.Gate = false
		info.Topology = &ti
	}
	t := p.template()
	if err := info.Merge(t); err != nil {
		return err
	}
	p.Labels, p.Annotations = t.Labels, t.Annotations
	p.Spec.NodeSelector, p.Spec.Tolerations = t.Spec.NodeSelector, t.Spec.Tolerations
	if toNode {
		return nil
	}
	p.Spec.SchedulingGates = slices.DeleteFunc(t.Spec.SchedulingGates, isAdmissionGate)
	if len(p.Spec.SchedulingGates) == 0 {
		p.Spec.SchedulingGates = nil
	}
	return nil
}

func podSetNames(infos []jobframework.PodSetInfo) []string {
	names := make([]string, len(infos))
	for i := range infos {
		names[i] = infos[i].Name
	}
	return names
}

// RestorePodSetsInfo has nothing to do: a stopped Pod is deleted, not
// given its spec back.
func (p *Pod) RestorePodSetsInfo([]jobframework.PodSetInfo) bool { return false }

func (p *Pod) Finished() (string, bool, bool) {
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		return "Pod succeeded", true, true
	case corev1.PodFailed:
		msg := "Pod failed"
		if p.Status.Message != "" {
			msg += ": " + p.Status.Message
		}
		return msg, false, true
	}
	return "", false, false
}

func (p *Pod) PodsReady() bool {
	if _, _, finished := p.Finished(); finished {
		return true
	}
	return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	})
}

// IsActive: a Pod that is not done may still hold its node.
func (p *Pod) IsActive() bool {
	_, _, finished := p.Finished()
	return !finished
}
