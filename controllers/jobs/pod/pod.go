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
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// The pod webhooks see only the pods that name a queue (an objectSelector
// per queue label, config/webhook/queued_pod_object_selector.yaml): a
// Muster that is down blocks no other pod. They see creations only: the
// updates of a queued Pod (a Job controller's finalizer, say) go through
// while Muster is down.
// +kubebuilder:webhook:path=/mutate-queued-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mqueuedpod.muster.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-queued-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mqueuedpod-kueue.muster.dev,admissionReviewVersions=v1
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
	// EnabledByDefault stays false: a kind added after the first release
	// is opt-in (docs/job-kinds.md).
}

// Pod is a plain Pod as a GenericJob, with one pod set of one pod.
type Pod corev1.Pod

var (
	_ jobframework.GenericJob           = (*Pod)(nil)
	_ jobframework.JobStoppedByDeletion = (*Pod)(nil)
	_ jobframework.JobWithValidation    = (*Pod)(nil)
)

// PodGroupNameLabel names a pod group, under Kueue's prefix or Muster's.
const PodGroupNameLabel = "pod-group-name"

// ValidateQueued refuses a Pod of a pod group: admitted one by one, a
// group's pods would be the partial allocation Muster exists to prevent,
// and groups are not admitted whole yet.
func (p *Pod) ValidateQueued() field.ErrorList {
	for _, prefix := range []string{"muster.dev/", musterv1beta1.KueuePrefix} {
		if _, ok := p.Labels[prefix+PodGroupNameLabel]; ok {
			return field.ErrorList{field.Forbidden(field.NewPath("metadata", "labels").Key(prefix+PodGroupNameLabel),
				"pod groups are not admitted yet: a group's pods admitted one by one could each wait for the others; "+
					"submit the group as a Job, JobSet or other job kind (docs/job-kinds.md)")}
		}
	}
	return nil
}

// podSetName is a Pod's one pod set, as Kueue names it.
const podSetName = "main"

func (p *Pod) Object() client.Object { return (*corev1.Pod)(p) }

func (p *Pod) StoppedByDeletion() {}

// IsSuspended: the Pod waits at the admission gate.
func (p *Pod) IsSuspended() bool { return slices.ContainsFunc(p.Spec.SchedulingGates, isAdmissionGate) }

// Suspend gates the Pod; the API server takes it only on a Pod being
// created (the webhook's), which is the only caller that needs it.
func (p *Pod) Suspend() {
	if !p.IsSuspended() {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: musterv1beta1.AdmissionSchedulingGate})
	}
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
	info := infos[0]
	info.Gang = nil
	t := p.template()
	if err := info.Merge(t); err != nil {
		return err
	}
	p.Labels, p.Annotations = t.Labels, t.Annotations
	p.Spec.NodeSelector, p.Spec.Tolerations = t.Spec.NodeSelector, t.Spec.Tolerations
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
