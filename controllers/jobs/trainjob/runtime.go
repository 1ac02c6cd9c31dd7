package trainjob

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/musterhq/muster/controllers/jobframework"
)

// The trainer's names (its pkg/constants), kept here rather than importing
// the trainer's runtime packages, which start controllers of their own.
const (
	// ancestorLabel on a replicated job's template says which step of the
	// TrainJob it runs.
	ancestorLabel      = "trainer.kubeflow.org/trainjob-ancestor-step"
	ancestorTrainer    = "trainer"
	datasetInitializer = "dataset-initializer"
	modelInitializer   = "model-initializer"
	// node is the trainer's container, and the MPI runtime's worker job.
	node = "node"
)

var errNotLoaded = errors.New("the TrainJob's runtime is not loaded")

// replicatedJob is one replicated job of the JobSet the trainer makes.
type replicatedJob struct {
	name string
	// replicas is how many child Jobs it has, pods how many pods each runs.
	replicas, pods int32
	template       corev1.PodTemplateSpec
}

// rendered builds the replicated jobs as trainer v2.2.1 builds its JobSet
// (its runtime/core and jobset builder): the runtime's template with the
// TrainJob's runtime patches merged in order (Muster's own only when
// withOwn), one child Job for the trainer and initializer steps, the
// trainer's pod count from mlPolicy.numNodes and then the TrainJob's
// numNodes, and the TrainJob's resourcesPerNode on the trainer container.
func (j *Job) rendered(withOwn bool) ([]replicatedJob, error) {
	if j.runtime == nil {
		return nil, errNotLoaded
	}
	if !withOwn && j.pods != nil {
		return j.pods, nil
	}
	jobs, err := j.render(withOwn)
	if err == nil && !withOwn {
		j.pods = jobs
	}
	return jobs, err
}

func (j *Job) render(withOwn bool) ([]replicatedJob, error) {
	v := j.view()
	spec := j.runtime.Template.Spec.DeepCopy()
	if err := mergePatches(v, spec, withOwn); err != nil {
		return nil, err
	}
	policy := j.runtime.MLPolicy
	out := make([]replicatedJob, 0, len(spec.ReplicatedJobs))
	trainerSeen := false
	for i := range spec.ReplicatedJobs {
		rj := &spec.ReplicatedJobs[i]
		ancestor := rj.Template.Labels[ancestorLabel]
		r := replicatedJob{name: rj.Name, replicas: max(rj.Replicas, 1), pods: ptr.Deref(rj.Template.Spec.Parallelism, 1), template: rj.Template.Spec.Template}
		switch ancestor {
		case ancestorTrainer, datasetInitializer, modelInitializer:
			r.replicas = 1
		}
		if ancestor == ancestorTrainer && policy != nil {
			r.pods = ptr.Deref(policy.NumNodes, 1)
		}
		if n := j.numNodes(v, rj.Name, ancestor == ancestorTrainer && !trainerSeen); n != nil {
			r.pods = *n
		}
		trainerSeen = trainerSeen || ancestor == ancestorTrainer
		if ancestor == ancestorTrainer || (j.launcherAsNode() && rj.Name == node) {
			setResourcesPerNode(v, &r.template)
		}
		out = append(out, r)
	}
	return out, nil
}

// numNodes is the TrainJob's numNodes for a replicated job, if it sets it:
// MPI runtimes give it to the node job (less the launcher when it runs as
// a node), the others to the first trainer job.
func (j *Job) numNodes(v *trainJob, name string, firstTrainer bool) *int32 {
	if v.Spec.Trainer == nil || v.Spec.Trainer.NumNodes == nil {
		return nil
	}
	n := *v.Spec.Trainer.NumNodes
	if j.mpi() {
		if name != node {
			return nil
		}
		if j.launcherAsNode() {
			n = max(n-1, 1)
		}
		return &n
	}
	if !firstTrainer {
		return nil
	}
	return &n
}

func (j *Job) mpi() bool {
	p := j.runtime.MLPolicy
	return p != nil && p.MPI != nil
}

func (j *Job) launcherAsNode() bool {
	return j.mpi() && ptr.Deref(j.runtime.MLPolicy.MPI.RunLauncherAsNode, false)
}

// setResourcesPerNode replaces the trainer container's resources with the
// TrainJob's, as the trainer does when it gives any.
func setResourcesPerNode(v *trainJob, t *corev1.PodTemplateSpec) {
	if v.Spec.Trainer == nil || v.Spec.Trainer.ResourcesPerNode == nil {
		return
	}
	res := v.Spec.Trainer.ResourcesPerNode
	if res.Limits == nil && res.Requests == nil {
		return
	}
	for i := range t.Spec.Containers {
		if t.Spec.Containers[i].Name == node {
			t.Spec.Containers[i].Resources = *res.DeepCopy()
		}
	}
}

// mergePatches merges the TrainJob's runtime patches into the JobSet
// template as the trainer does: each replicated job patch strategically
// merged into the replicated job of its name.
func mergePatches(v *trainJob, spec *jobsetv1alpha2.JobSetSpec, withOwn bool) error {
	for _, p := range v.Spec.RuntimePatches {
		if (p.Manager == Manager && !withOwn) || p.TrainingRuntimeSpec == nil || p.TrainingRuntimeSpec.Template == nil ||
			p.TrainingRuntimeSpec.Template.Spec == nil {
			continue
		}
		for _, rjp := range p.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
			if len(rjp.Template) == 0 {
				continue
			}
			for i := range spec.ReplicatedJobs {
				if spec.ReplicatedJobs[i].Name != rjp.Name {
					continue
				}
				merged, err := mergeJobTemplate(&spec.ReplicatedJobs[i].Template, rjp.Template)
				if err != nil {
					return fmt.Errorf("runtime patch of %s on replicated job %s: %w", p.Manager, rjp.Name, err)
				}
				spec.ReplicatedJobs[i].Template = *merged
			}
		}
	}
	return nil
}

func mergeJobTemplate(t *batchv1.JobTemplateSpec, patch []byte) (*batchv1.JobTemplateSpec, error) {
	source, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergePatch(source, patch, batchv1.JobTemplateSpec{})
	if err != nil {
		return nil, err
	}
	var out batchv1.JobTemplateSpec
	return &out, json.Unmarshal(merged, &out)
}

// RunWithPodSetsInfo writes each pod set's placement into Muster's runtime
// patch, in the same write that unsuspends the TrainJob: the trainer's
// webhook accepts a patch change on a TrainJob suspended before the write,
// and the trainer applies the patched templates with the resume. Node
// selector and tolerations are written whole (a patch's toleration list
// replaces the template's), labels, annotations and scheduling gates only
// where the placement adds them.
func (j *Job) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	jobs, err := j.rendered(false)
	if err != nil {
		return err
	}
	patches := make([]replicatedJobPlacement, 0, len(infos))
	for i := range infos {
		idx := slices.IndexFunc(jobs, func(rj replicatedJob) bool { return rj.name == infos[i].Name })
		if idx < 0 {
			return fmt.Errorf("TrainJob %s has no replicated job for pod set %s", j.obj.GetName(), infos[i].Name)
		}
		placed := jobs[idx].template.DeepCopy()
		if err := infos[i].Merge(placed); err != nil {
			return err
		}
		patches = append(patches, placementPatch(infos[i].Name, &jobs[idx].template, placed))
	}
	var p runtimeSpecPatch
	p.Template.Spec.ReplicatedJobs = patches
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p)
	if err != nil {
		return err
	}
	if err := j.setOwnPatch(spec); err != nil {
		return err
	}
	j.setSuspend(false)
	return nil
}

// placementPatch is what turns a replicated job's template into its placed
// one.
func placementPatch(name string, was, placed *corev1.PodTemplateSpec) replicatedJobPlacement {
	var spec podSpecPatch
	if !maps.Equal(was.Spec.NodeSelector, placed.Spec.NodeSelector) {
		spec.NodeSelector = placed.Spec.NodeSelector
	}
	if !equality.Semantic.DeepEqual(was.Spec.Tolerations, placed.Spec.Tolerations) {
		spec.Tolerations = placed.Spec.Tolerations
	}
	for _, g := range placed.Spec.SchedulingGates {
		if !slices.Contains(was.Spec.SchedulingGates, g) {
			spec.SchedulingGates = append(spec.SchedulingGates, g)
		}
	}
	out := replicatedJobPlacement{Name: name}
	out.Template.Spec.Template.Spec = spec
	labels, annotations := added(was.Labels, placed.Labels), added(was.Annotations, placed.Annotations)
	if labels != nil || annotations != nil {
		out.Template.Spec.Template.Metadata = &podMetadataPatch{Labels: labels, Annotations: annotations}
	}
	return out
}

// added are the entries of b that a does not have with the same value.
func added(a, b map[string]string) map[string]string {
	var out map[string]string
	for k, v := range b {
		if old, ok := a[k]; ok && old == v {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

// RestorePodSetsInfo empties Muster's runtime patch: the templates are the
// runtime's and the other managers' again. The entry itself stays (its
// manager cannot change, and the next admission fills it).
func (j *Job) RestorePodSetsInfo([]jobframework.PodSetInfo) bool {
	patches, _, _ := unstructured.NestedSlice(j.obj.Object, "spec", "runtimePatches")
	for _, p := range patches {
		if m, ok := p.(map[string]any); ok && m["manager"] == Manager {
			if _, has := m["trainingRuntimeSpec"]; !has {
				return false
			}
			delete(m, "trainingRuntimeSpec")
			_ = unstructured.SetNestedSlice(j.obj.Object, patches, "spec", "runtimePatches")
			return true
		}
	}
	return false
}

// setOwnPatch sets the trainingRuntimeSpec of Muster's runtime patch,
// added last if the TrainJob has none.
func (j *Job) setOwnPatch(spec map[string]any) error {
	patches, _, err := unstructured.NestedSlice(j.obj.Object, "spec", "runtimePatches")
	if err != nil {
		return err
	}
	i := slices.IndexFunc(patches, func(p any) bool {
		m, ok := p.(map[string]any)
		return ok && m["manager"] == Manager
	})
	if i < 0 {
		patches = append(patches, map[string]any{"manager": Manager})
		i = len(patches) - 1
	}
	patches[i].(map[string]any)["trainingRuntimeSpec"] = spec
	return unstructured.SetNestedSlice(j.obj.Object, patches, "spec", "runtimePatches")
}
