// Package jobframework is what every job kind shares: the GenericJob
// interface an adapter implements; the generic reconciler that turns a job
// into one Workload, starts the job when the Workload is admitted and stops
// it when the Workload is evicted; the generic job webhook that creates
// queued jobs suspended; and the Registry of kinds the manager sets up.
// Adding a kind means writing an adapter and registering it in
// controllers/jobs (docs/job-kinds.md), nothing here.
package jobframework

import (
	"context"
	"errors"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// GenericJob is one job object seen through the operations Muster needs.
type GenericJob interface {
	// Object is the job itself, for reads and writes.
	Object() client.Object
	// IsSuspended reports whether the job is suspended.
	IsSuspended() bool
	// Suspend suspends the job (in memory; the reconciler writes it).
	Suspend()
	// RunWithPodSetsInfo injects the flavors' placement into the pod
	// templates and unsuspends the job.
	RunWithPodSetsInfo(infos []PodSetInfo) error
	// RestorePodSetsInfo puts back the pod templates' original placement and
	// reports whether anything changed.
	RestorePodSetsInfo(infos []PodSetInfo) bool
	// PodSets lists the job's pod sets with their counts and templates.
	PodSets() []musterv1beta1.PodSet
	// Finished reports whether the job finished, whether it succeeded, and
	// a message.
	Finished() (message string, succeeded, finished bool)
	// PodsReady reports whether all the job's pods are ready (or done).
	PodsReady() bool
	// IsActive reports whether the job still has running pods.
	IsActive() bool
}

// JobWithValidation is implemented by kinds Muster can admit only in some
// shapes: the job webhook refuses a job in a queue that is not one of them,
// with the errors returned.
type JobWithValidation interface {
	ValidateQueued() field.ErrorList
}

// JobWithDefaults is implemented by kinds whose webhook records something
// on every gated job it sees, suspended already or not (a pod group's Pod:
// its shape, after any other webhook changed it).
type JobWithDefaults interface {
	Default()
}

// JobWithRelatedObjects is implemented by kinds whose pod sets come partly
// from another object (a TrainJob's training runtime): the reconciler and
// the webhook load it before they ask for the job's pod sets. A related
// object that is missing is a NotFound error, which the reconciler reports
// on the job and retries.
type JobWithRelatedObjects interface {
	LoadRelated(ctx context.Context, r client.Reader) error
}

// JobWithPodFailureBudget is implemented by kinds that fail once enough of
// their pods have failed (a batch/v1 Job's backoffLimit): a node failure
// that takes more pods than that with it requeues the job whole instead of
// moving its pods.
type JobWithPodFailureBudget interface {
	// PodFailuresTolerated is how many more pods may fail before the job
	// fails; ok is false when pod failures do not fail it (or are not
	// counted for disruptions).
	PodFailuresTolerated() (n int32, ok bool)
}

// JobWithTemplateLock is implemented by kinds whose API server refuses a
// stopped job's pod template changes until its pods are gone (a batch/v1
// Job: suspended, and no active pods): the placement is put back then,
// rather than retried into the refusal while the pods terminate.
type JobWithTemplateLock interface {
	// TemplateLocked reports whether the template cannot change yet.
	TemplateLocked() bool
}

// JobWithSubGroups is implemented by kinds whose pod sets are made of
// equal sub-groups numbering their pods from 0 (a JobSet's replicated job:
// its child Jobs), with Kind.SubGroupIndexLabel naming a pod's sub-group.
type JobWithSubGroups interface {
	// SubGroups is how many sub-groups a pod set has.
	SubGroups(podSet string) int32
}

// JobStoppedByDeletion is implemented by kinds that can be suspended only
// when they are created (a Pod: a scheduling gate can be removed, never
// added). The webhook gates them at creation; the reconciler leaves one
// it finds running without a Workload alone (it got past a webhook that
// was not called, and cannot be held back now), and stops one by deleting
// it, as Kueue stops a plain Pod.
type JobStoppedByDeletion interface {
	StoppedByDeletion()
}

// JobWithStopCleanup is implemented by jobs that must clean up more than
// their spec when stopped (e.g. a batch/v1 Job's startTime).
type JobWithStopCleanup interface {
	// ClearStatusOnStop resets status fields that would keep the stopped job
	// from being started with a different placement. It reports whether a
	// status write is needed.
	ClearStatusOnStop() bool
}

// PodSetInfo is the placement of one pod set: what is injected on admission
// and restored on eviction.
type PodSetInfo struct {
	Name         string
	Count        int32
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	// Topology, set for a pod set placed in a topology, marks its pods for
	// the ungater: the workload annotation, the pod set label and, unless
	// the whole pod set goes to one node (NodeSelector names it), the
	// topology scheduling gate.
	Topology *TopologyInfo
	// Gang, set when a gang scheduler binds the pods, is what points them
	// at their pod group.
	Gang *GangInfo
	// Labels and Annotations are what admission checks add to the pods
	// (podSetUpdates); on restore, the original values of the keys they
	// set, and Drop the keys they added.
	Labels, Annotations map[string]string
	Drop                *MetaKeys
}

// MetaKeys names pod template labels and annotations.
type MetaKeys struct {
	Labels, Annotations []string
}

// TopologyInfo is what the pods of a placed pod set carry.
type TopologyInfo struct {
	Workload string
	Gate     bool
}

// Merge adds a placement to a pod template: node selector keys are added
// (an existing key with another value is a conflict), tolerations appended
// unless already there, and the topology marks set.
func (i *PodSetInfo) Merge(t *corev1.PodTemplateSpec) error {
	spec := &t.Spec
	for k, v := range i.NodeSelector {
		if old, ok := spec.NodeSelector[k]; ok && old != v {
			return &conflictError{key: k, have: old, want: v}
		}
	}
	if len(i.NodeSelector) > 0 && spec.NodeSelector == nil {
		spec.NodeSelector = map[string]string{}
	}
	for k, v := range i.NodeSelector {
		spec.NodeSelector[k] = v
	}
	for _, t := range i.Tolerations {
		if !containsToleration(spec.Tolerations, t) {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
	mergeMeta(&t.Labels, i.Labels)
	mergeMeta(&t.Annotations, i.Annotations)
	if i.Topology != nil {
		markTopology(t, i.Name, i.Topology)
	}
	if i.Gang != nil {
		markGang(t, i.Gang)
	} else {
		unmarkGang(t)
	}
	return nil
}

// Restore replaces a pod template's placement with this info's and drops
// the topology marks, reporting whether anything changed.
func (i *PodSetInfo) Restore(t *corev1.PodTemplateSpec) bool {
	spec := &t.Spec
	changed := !maps.Equal(spec.NodeSelector, i.NodeSelector) || !equalTolerations(spec.Tolerations, i.Tolerations)
	spec.NodeSelector = maps.Clone(i.NodeSelector)
	spec.Tolerations = append([]corev1.Toleration(nil), i.Tolerations...)
	changed = restoreMeta(&t.Labels, i.Labels, i.Drop.labels()) || changed
	changed = restoreMeta(&t.Annotations, i.Annotations, i.Drop.annotations()) || changed
	changed = unmarkGang(t) || changed
	return unmarkTopology(t) || changed
}

func (k *MetaKeys) labels() []string {
	if k == nil {
		return nil
	}
	return k.Labels
}

func (k *MetaKeys) annotations() []string {
	if k == nil {
		return nil
	}
	return k.Annotations
}

// mergeMeta adds labels or annotations, replacing a key the template has:
// what an admission check adds is the check's to say (a template still
// carrying an earlier attempt's value must not keep the job from starting).
func mergeMeta(dst *map[string]string, add map[string]string) { *dst = withAll(*dst, add) }

// restoreMeta sets keys back to their original values and drops the keys
// that were added, reporting whether anything changed.
func restoreMeta(dst *map[string]string, orig map[string]string, drop []string) bool {
	changed := false
	for k, v := range orig {
		if old, ok := (*dst)[k]; !ok || old != v {
			if *dst == nil {
				*dst = map[string]string{}
			}
			(*dst)[k], changed = v, true
		}
	}
	for _, k := range drop {
		if _, ok := (*dst)[k]; ok {
			delete(*dst, k)
			changed = true
		}
	}
	return changed
}

func markTopology(t *corev1.PodTemplateSpec, podSet string, ti *TopologyInfo) {
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Annotations[musterv1beta1.WorkloadAnnotation] = ti.Workload
	t.Labels[musterv1beta1.PodSetLabel] = podSet
	if ti.Gate && !slices.ContainsFunc(t.Spec.SchedulingGates, isTopologyGate) {
		t.Spec.SchedulingGates = append(t.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: musterv1beta1.TopologySchedulingGate})
	}
}

func unmarkTopology(t *corev1.PodTemplateSpec) bool {
	_, a := t.Annotations[musterv1beta1.WorkloadAnnotation]
	_, l := t.Labels[musterv1beta1.PodSetLabel]
	delete(t.Annotations, musterv1beta1.WorkloadAnnotation)
	delete(t.Labels, musterv1beta1.PodSetLabel)
	n := len(t.Spec.SchedulingGates)
	t.Spec.SchedulingGates = slices.DeleteFunc(t.Spec.SchedulingGates, isTopologyGate)
	if len(t.Spec.SchedulingGates) == 0 {
		t.Spec.SchedulingGates = nil
	}
	return a || l || len(t.Spec.SchedulingGates) != n
}

func isTopologyGate(g corev1.PodSchedulingGate) bool {
	return g.Name == musterv1beta1.TopologySchedulingGate
}

type conflictError struct{ key, have, want string }

// IsPlacementConflict reports whether err is a node selector of the job that
// contradicts its flavor's: a permanent failure to start.
func IsPlacementConflict(err error) bool {
	var c *conflictError
	return errors.As(err, &c)
}

func (e *conflictError) Error() string {
	return "node selector " + e.key + "=" + e.have + " conflicts with the flavor's " + e.key + "=" + e.want
}

func containsToleration(ts []corev1.Toleration, t corev1.Toleration) bool {
	for _, x := range ts {
		if x.MatchToleration(&t) && x.Value == t.Value && x.TolerationSeconds == t.TolerationSeconds {
			return true
		}
	}
	return false
}

func equalTolerations(a, b []corev1.Toleration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].MatchToleration(&b[i]) || a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}
