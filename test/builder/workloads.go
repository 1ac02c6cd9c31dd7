package builder

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// WorkloadBuilder builds a Workload.
type WorkloadBuilder struct{ wl musterv1beta1.Workload }

// MakeWorkload starts a Workload with one pod set "main" of one pod.
func MakeWorkload(name, namespace string) *WorkloadBuilder {
	return &WorkloadBuilder{wl: musterv1beta1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: musterv1beta1.WorkloadSpec{
			PodSets: []musterv1beta1.PodSet{MakePodSet("main", 1).Obj()},
		},
	}}
}

// Queue sets the LocalQueue.
func (b *WorkloadBuilder) Queue(name string) *WorkloadBuilder {
	b.wl.Spec.QueueName = musterv1beta1.LocalQueueName(name)
	return b
}

// Priority sets the priority.
func (b *WorkloadBuilder) Priority(p int32) *WorkloadBuilder {
	b.wl.Spec.Priority = &p
	return b
}

// PodSets replaces the pod sets.
func (b *WorkloadBuilder) PodSets(ps ...musterv1beta1.PodSet) *WorkloadBuilder {
	b.wl.Spec.PodSets = ps
	return b
}

// Request sets a per-pod request of the first pod set.
func (b *WorkloadBuilder) Request(name corev1.ResourceName, q string) *WorkloadBuilder {
	setRequest(&b.wl.Spec.PodSets[0].Template.Spec, name, q)
	return b
}

// Created sets the creation time.
func (b *WorkloadBuilder) Created(t time.Time) *WorkloadBuilder {
	b.wl.CreationTimestamp = metav1.NewTime(t)
	return b
}

// Obj returns the Workload.
func (b *WorkloadBuilder) Obj() *musterv1beta1.Workload { return b.wl.DeepCopy() }

// PodSetBuilder builds a pod set.
type PodSetBuilder struct{ ps musterv1beta1.PodSet }

// MakePodSet starts a pod set of count pods with one container.
func MakePodSet(name string, count int32) *PodSetBuilder {
	return &PodSetBuilder{ps: musterv1beta1.PodSet{
		Name:     name,
		Count:    count,
		Template: corev1.PodTemplateSpec{Spec: podSpec()},
	}}
}

// Request sets a per-pod request.
func (b *PodSetBuilder) Request(name corev1.ResourceName, q string) *PodSetBuilder {
	setRequest(&b.ps.Template.Spec, name, q)
	return b
}

// Obj returns the pod set.
func (b *PodSetBuilder) Obj() musterv1beta1.PodSet { return *b.ps.DeepCopy() }

// JobBuilder builds a batch/v1 Job.
type JobBuilder struct{ job batchv1.Job }

// MakeJob starts a Job of one pod that never restarts.
func MakeJob(name, namespace string) *JobBuilder {
	spec := podSpec()
	spec.RestartPolicy = corev1.RestartPolicyNever
	return &JobBuilder{job: batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To[int32](1),
			Completions: ptr.To[int32](1),
			Template:    corev1.PodTemplateSpec{Spec: spec},
		},
	}}
}

// Queue labels the Job with Muster's queue label.
func (b *JobBuilder) Queue(name string) *JobBuilder {
	return b.Label(musterv1beta1.QueueNameLabel, name)
}

// Label sets a label.
func (b *JobBuilder) Label(k, v string) *JobBuilder {
	if b.job.Labels == nil {
		b.job.Labels = map[string]string{}
	}
	b.job.Labels[k] = v
	return b
}

// Parallelism sets parallelism and completions.
func (b *JobBuilder) Parallelism(n int32) *JobBuilder {
	b.job.Spec.Parallelism = &n
	b.job.Spec.Completions = &n
	return b
}

// Suspend sets spec.suspend.
func (b *JobBuilder) Suspend(s bool) *JobBuilder {
	b.job.Spec.Suspend = &s
	return b
}

// Request sets a per-pod request.
func (b *JobBuilder) Request(name corev1.ResourceName, q string) *JobBuilder {
	setRequest(&b.job.Spec.Template.Spec, name, q)
	return b
}

// Limit sets a per-pod limit and no request: the API server makes the
// limit the request of the pods, but not of the template.
func (b *JobBuilder) Limit(name corev1.ResourceName, q string) *JobBuilder {
	c := &b.job.Spec.Template.Spec.Containers[0]
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	c.Resources.Limits[name] = resource.MustParse(q)
	return b
}

// InitContainerLimit adds an init container limited (and so requesting) q
// of a resource.
func (b *JobBuilder) InitContainerLimit(name corev1.ResourceName, q string) *JobBuilder {
	spec := &b.job.Spec.Template.Spec
	spec.InitContainers = append(spec.InitContainers, corev1.Container{
		Name: "init", Image: spec.Containers[0].Image,
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{name: resource.MustParse(q)}},
	})
	return b
}

// RuntimeClass sets the pods' RuntimeClass.
func (b *JobBuilder) RuntimeClass(name string) *JobBuilder {
	b.job.Spec.Template.Spec.RuntimeClassName = &name
	return b
}

// NodeSelector sets a node selector of the pod template.
func (b *JobBuilder) NodeSelector(k, v string) *JobBuilder {
	if b.job.Spec.Template.Spec.NodeSelector == nil {
		b.job.Spec.Template.Spec.NodeSelector = map[string]string{}
	}
	b.job.Spec.Template.Spec.NodeSelector[k] = v
	return b
}

// Obj returns the Job.
func (b *JobBuilder) Obj() *batchv1.Job { return b.job.DeepCopy() }

// ManagedBy sets spec.managedBy (muster.dev/multicluster hands the job to
// the multi-cluster dispatch).
func (b *JobBuilder) ManagedBy(v string) *JobBuilder {
	b.job.Spec.ManagedBy = &v
	return b
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name:  "c",
			Image: "registry.k8s.io/pause:3.10",
		}},
	}
}

func setRequest(spec *corev1.PodSpec, name corev1.ResourceName, q string) {
	c := &spec.Containers[0]
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	c.Resources.Requests[name] = resource.MustParse(q)
	if name != corev1.ResourceCPU && name != corev1.ResourceMemory && name != corev1.ResourceEphemeralStorage {
		// Extended resources must be limited to what they request.
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		c.Resources.Limits[name] = resource.MustParse(q)
	}
}

// Annotation sets an annotation on the Job itself.
func (b *JobBuilder) Annotation(k, v string) *JobBuilder {
	if b.job.Annotations == nil {
		b.job.Annotations = map[string]string{}
	}
	b.job.Annotations[k] = v
	return b
}

// Indexed makes the Job Indexed with completions equal to its parallelism.
func (b *JobBuilder) Indexed() *JobBuilder {
	b.job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	b.job.Spec.Completions = ptr.To(ptr.Deref(b.job.Spec.Parallelism, 1))
	return b
}
