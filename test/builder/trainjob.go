package builder

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// Kubeflow Trainer v2's objects are unstructured in Muster (its Go types do
// not compile against Muster's k8s.io/api): controllers/jobs/trainjob.
const trainerAPIVersion = "trainer.kubeflow.org/v1alpha1"

// TrainJobBuilder builds a Kubeflow Trainer TrainJob.
type TrainJobBuilder struct{ u unstructured.Unstructured }

// MakeTrainJob is a TrainJob on the ClusterTrainingRuntime runtime.
func MakeTrainJob(name, namespace, runtime string) *TrainJobBuilder {
	b := &TrainJobBuilder{}
	b.u.SetAPIVersion(trainerAPIVersion)
	b.u.SetKind("TrainJob")
	b.u.SetName(name)
	b.u.SetNamespace(namespace)
	b.set(map[string]any{"name": runtime}, "spec", "runtimeRef")
	return b
}

func (b *TrainJobBuilder) set(v any, path ...string) {
	if err := unstructured.SetNestedField(b.u.Object, runtime.DeepCopyJSONValue(v), path...); err != nil {
		panic(err)
	}
}

// Queue labels the TrainJob with Kueue's queue label, as a Kueue user
// writes it.
func (b *TrainJobBuilder) Queue(name string) *TrainJobBuilder {
	b.u.SetLabels(map[string]string{musterv1beta1.KueueQueueNameLabel: name})
	return b
}

// NumNodes sets spec.trainer.numNodes.
func (b *TrainJobBuilder) NumNodes(n int64) *TrainJobBuilder {
	b.set(n, "spec", "trainer", "numNodes")
	return b
}

// ResourcesPerNode sets spec.trainer.resourcesPerNode to q of name, as a
// request and a limit.
func (b *TrainJobBuilder) ResourcesPerNode(name corev1.ResourceName, q string) *TrainJobBuilder {
	b.set(map[string]any{"requests": map[string]any{string(name): q}, "limits": map[string]any{string(name): q}}, "spec", "trainer", "resourcesPerNode")
	return b
}

// RuntimeKind names a namespaced TrainingRuntime instead.
func (b *TrainJobBuilder) RuntimeKind(kind string) *TrainJobBuilder {
	b.set(kind, "spec", "runtimeRef", "kind")
	return b
}

// Obj returns the TrainJob.
func (b *TrainJobBuilder) Obj() *unstructured.Unstructured { return b.u.DeepCopy() }

// TrainingRuntimeBuilder builds a ClusterTrainingRuntime (or, with
// Namespace, a TrainingRuntime) with the trainer's own step labels.
type TrainingRuntimeBuilder struct {
	u        unstructured.Unstructured
	numNodes int32
	jobs     []jobsetv1alpha2.ReplicatedJob
	podAnn   map[string]string
}

// MakeClusterTrainingRuntime is a torch runtime of one node.
func MakeClusterTrainingRuntime(name string) *TrainingRuntimeBuilder {
	b := &TrainingRuntimeBuilder{numNodes: 1}
	b.u.SetAPIVersion(trainerAPIVersion)
	b.u.SetKind("ClusterTrainingRuntime")
	b.u.SetName(name)
	return b
}

// Namespace makes it a TrainingRuntime of that namespace.
func (b *TrainingRuntimeBuilder) Namespace(ns string) *TrainingRuntimeBuilder {
	b.u.SetKind("TrainingRuntime")
	b.u.SetNamespace(ns)
	return b
}

// Initializer adds an initializer step (dataset-initializer or
// model-initializer), one pod asking for q of name.
func (b *TrainingRuntimeBuilder) Initializer(step string, name corev1.ResourceName, q string) *TrainingRuntimeBuilder {
	return b.step(step, step, step, name, q)
}

// Trainer adds the trainer step: a replicated job of that name whose
// container "node" asks for q of name on each node.
func (b *TrainingRuntimeBuilder) Trainer(job string, name corev1.ResourceName, q string) *TrainingRuntimeBuilder {
	return b.step(job, "trainer", "node", name, q)
}

func (b *TrainingRuntimeBuilder) step(job, ancestor, container string, name corev1.ResourceName, q string) *TrainingRuntimeBuilder {
	spec := podSpec()
	spec.Containers[0].Name = container
	setRequest(&spec, name, q)
	b.jobs = append(b.jobs, jobsetv1alpha2.ReplicatedJob{Name: job, Replicas: 1, Template: batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"trainer.kubeflow.org/trainjob-ancestor-step": ancestor}},
		Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: spec}},
	}})
	return b
}

// PodAnnotation annotates every step's pods (muster.dev/runtime: how long
// the local cluster's kwok runs them).
func (b *TrainingRuntimeBuilder) PodAnnotation(k, v string) *TrainingRuntimeBuilder {
	if b.podAnn == nil {
		b.podAnn = map[string]string{}
	}
	b.podAnn[k] = v
	return b
}

// NumNodes sets mlPolicy.numNodes.
func (b *TrainingRuntimeBuilder) NumNodes(n int32) *TrainingRuntimeBuilder {
	b.numNodes = n
	return b
}

// Obj returns the runtime.
func (b *TrainingRuntimeBuilder) Obj() *unstructured.Unstructured {
	for i := range b.jobs {
		if len(b.podAnn) > 0 {
			b.jobs[i].Template.Spec.Template.Annotations = b.podAnn
		}
	}
	spec := jobsetv1alpha2.JobSetSpec{ReplicatedJobs: b.jobs, SuccessPolicy: &jobsetv1alpha2.SuccessPolicy{Operator: jobsetv1alpha2.OperatorAll}}
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		panic(err)
	}
	u := b.u.DeepCopy()
	u.Object["spec"] = map[string]any{
		"mlPolicy": map[string]any{"numNodes": int64(b.numNodes), "torch": map[string]any{}},
		"template": map[string]any{"spec": tmpl},
	}
	return u
}
