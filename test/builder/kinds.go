package builder

import (
	"strconv"

	kfmpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// PyTorchJobBuilder builds a Kubeflow PyTorchJob.
type PyTorchJobBuilder struct{ job kftraining.PyTorchJob }

// MakePyTorchJob starts a PyTorchJob with one master and no workers.
func MakePyTorchJob(name, namespace string) *PyTorchJobBuilder {
	b := &PyTorchJobBuilder{job: kftraining.PyTorchJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: kftraining.PyTorchJobSpec{
			RunPolicy:           kftraining.RunPolicy{},
			PyTorchReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{},
		},
	}}
	return b.Replicas(kftraining.PyTorchJobReplicaTypeMaster, 1)
}

// Queue labels the job with Muster's queue label.
func (b *PyTorchJobBuilder) Queue(name string) *PyTorchJobBuilder {
	b.job.Labels = map[string]string{musterv1beta1.QueueNameLabel: name}
	return b
}

// Replicas sets the replica count of a replica type.
func (b *PyTorchJobBuilder) Replicas(rt kftraining.ReplicaType, n int32) *PyTorchJobBuilder {
	spec := b.job.Spec.PyTorchReplicaSpecs[rt]
	if spec == nil {
		ps := podSpec()
		ps.Containers[0].Name = "pytorch" // the operator's container name
		spec = &kftraining.ReplicaSpec{Template: corev1.PodTemplateSpec{Spec: ps}, RestartPolicy: kftraining.RestartPolicyNever}
		b.job.Spec.PyTorchReplicaSpecs[rt] = spec
	}
	spec.Replicas = ptr.To(n)
	return b
}

// Request sets a per-pod request of a replica type.
func (b *PyTorchJobBuilder) Request(rt kftraining.ReplicaType, name corev1.ResourceName, q string) *PyTorchJobBuilder {
	setRequest(&b.job.Spec.PyTorchReplicaSpecs[rt].Template.Spec, name, q)
	return b
}

// Obj returns the PyTorchJob.
func (b *PyTorchJobBuilder) Obj() *kftraining.PyTorchJob { return b.job.DeepCopy() }

// RayClusterBuilder builds a KubeRay RayCluster.
type RayClusterBuilder struct{ rc rayv1.RayCluster }

// MakeRayCluster starts a RayCluster with a head and no worker groups.
func MakeRayCluster(name, namespace string) *RayClusterBuilder {
	head := podSpec()
	head.Containers[0].Name = "ray-head"
	return &RayClusterBuilder{rc: rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: rayv1.RayClusterSpec{
			HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{}, Template: corev1.PodTemplateSpec{Spec: head}},
		},
	}}
}

// Queue labels the cluster with Muster's queue label.
func (b *RayClusterBuilder) Queue(name string) *RayClusterBuilder {
	b.rc.Labels = map[string]string{musterv1beta1.QueueNameLabel: name}
	return b
}

// HeadRequest sets a request of the head pod.
func (b *RayClusterBuilder) HeadRequest(name corev1.ResourceName, q string) *RayClusterBuilder {
	setRequest(&b.rc.Spec.HeadGroupSpec.Template.Spec, name, q)
	return b
}

// WorkerGroup adds a worker group of replicas pods with a per-pod request.
func (b *RayClusterBuilder) WorkerGroup(name string, replicas int32, res corev1.ResourceName, q string) *RayClusterBuilder {
	spec := podSpec()
	spec.Containers[0].Name = "ray-worker"
	setRequest(&spec, res, q)
	b.rc.Spec.WorkerGroupSpecs = append(b.rc.Spec.WorkerGroupSpecs, rayv1.WorkerGroupSpec{
		GroupName: name, Replicas: ptr.To(replicas), MinReplicas: ptr.To(replicas), MaxReplicas: ptr.To(replicas),
		RayStartParams: map[string]string{}, Template: corev1.PodTemplateSpec{Spec: spec},
	})
	return b
}

// Obj returns the RayCluster.
func (b *RayClusterBuilder) Obj() *rayv1.RayCluster { return b.rc.DeepCopy() }

// RayJobBuilder builds a KubeRay RayJob.
type RayJobBuilder struct{ job rayv1.RayJob }

// MakeRayJob starts a RayJob that runs on a cluster of the given spec,
// deletes it when done, and submits from a Kubernetes Job whose pod asks
// for nothing (the tests' queues cover GPUs only).
func MakeRayJob(name, namespace string, cluster rayv1.RayClusterSpec) *RayJobBuilder {
	submitter := podSpec()
	submitter.Containers[0].Name = "ray-job-submitter"
	submitter.RestartPolicy = corev1.RestartPolicyNever
	return &RayJobBuilder{job: rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: rayv1.RayJobSpec{
			Entrypoint: "python -c 'print(1)'", RayClusterSpec: cluster.DeepCopy(), ShutdownAfterJobFinishes: true,
			SubmissionMode: rayv1.K8sJobMode, SubmitterPodTemplate: &corev1.PodTemplateSpec{Spec: submitter},
		},
	}}
}

// Queue labels the job with Muster's queue label.
func (b *RayJobBuilder) Queue(name string) *RayJobBuilder {
	b.job.Labels = map[string]string{musterv1beta1.QueueNameLabel: name}
	return b
}

// Obj returns the RayJob.
func (b *RayJobBuilder) Obj() *rayv1.RayJob { return b.job.DeepCopy() }

// JobSetBuilder builds a JobSet.
type JobSetBuilder struct{ js jobsetv1alpha2.JobSet }

// MakeJobSet starts a JobSet with no replicated jobs.
func MakeJobSet(name, namespace string) *JobSetBuilder {
	return &JobSetBuilder{js: jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}}
}

// Queue labels the JobSet with Muster's queue label.
func (b *JobSetBuilder) Queue(name string) *JobSetBuilder {
	b.js.Labels = map[string]string{musterv1beta1.QueueNameLabel: name}
	return b
}

// ReplicatedJob adds replicas child Jobs of parallelism pods, each asking
// for q of resource name.
func (b *JobSetBuilder) ReplicatedJob(rjName string, replicas, parallelism int32, name corev1.ResourceName, q string) *JobSetBuilder {
	spec := podSpec()
	setRequest(&spec, name, q)
	b.js.Spec.ReplicatedJobs = append(b.js.Spec.ReplicatedJobs, jobsetv1alpha2.ReplicatedJob{
		Name: rjName, Replicas: replicas,
		Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Template:       corev1.PodTemplateSpec{Spec: spec},
		}},
	})
	return b
}

// Obj returns the JobSet.
func (b *JobSetBuilder) Obj() *jobsetv1alpha2.JobSet { return b.js.DeepCopy() }

// MPIJobBuilder builds a Kubeflow MPIJob (kubeflow.org/v2beta1).
type MPIJobBuilder struct{ job kfmpi.MPIJob }

// MakeMPIJob starts an MPIJob with a launcher asking for nothing and
// workers pods asking for q of resource name each, cleaned up when the
// launcher finishes.
func MakeMPIJob(name, namespace string, workers int32, res corev1.ResourceName, q string) *MPIJobBuilder {
	launcher, worker := podSpec(), podSpec()
	launcher.Containers[0].Name, worker.Containers[0].Name = "launcher", "worker"
	setRequest(&worker, res, q)
	return &MPIJobBuilder{job: kfmpi.MPIJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: kfmpi.MPIJobSpec{
			SlotsPerWorker: ptr.To[int32](1),
			// As Kueue's examples do: the workers go when the launcher is
			// done (the operator's default, None, keeps them running).
			RunPolicy: kfmpi.RunPolicy{CleanPodPolicy: ptr.To(kfmpi.CleanPodPolicyRunning)},
			MPIReplicaSpecs: map[kfmpi.MPIReplicaType]*kfmpi.ReplicaSpec{
				kfmpi.MPIReplicaTypeLauncher: {Replicas: ptr.To[int32](1), Template: corev1.PodTemplateSpec{Spec: launcher}},
				kfmpi.MPIReplicaTypeWorker:   {Replicas: ptr.To(workers), Template: corev1.PodTemplateSpec{Spec: worker}},
			},
		},
	}}
}

// Queue labels the job with Muster's queue label.
func (b *MPIJobBuilder) Queue(name string) *MPIJobBuilder {
	b.job.Labels = map[string]string{musterv1beta1.QueueNameLabel: name}
	return b
}

// MinAvailable sets the pod group's minimum (launcher and workers), which
// lets the workers be admitted partially.
func (b *MPIJobBuilder) MinAvailable(n int32) *MPIJobBuilder {
	b.job.Spec.RunPolicy.SchedulingPolicy = &kfmpi.SchedulingPolicy{MinAvailable: ptr.To(n)}
	return b
}

// Obj returns the MPIJob.
func (b *MPIJobBuilder) Obj() *kfmpi.MPIJob { return b.job.DeepCopy() }

// PodBuilder builds a plain Pod.
type PodBuilder struct{ pod corev1.Pod }

// MakePod starts a Pod of one container that never restarts.
func MakePod(name, namespace string) *PodBuilder {
	spec := podSpec()
	spec.RestartPolicy = corev1.RestartPolicyNever
	return &PodBuilder{pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: spec}}
}

// Queue labels the Pod with Muster's queue label.
func (b *PodBuilder) Queue(name string) *PodBuilder {
	return b.Label(musterv1beta1.QueueNameLabel, name)
}

// Label sets a label.
func (b *PodBuilder) Label(k, v string) *PodBuilder {
	if b.pod.Labels == nil {
		b.pod.Labels = map[string]string{}
	}
	b.pod.Labels[k] = v
	return b
}

// Annotation sets an annotation.
func (b *PodBuilder) Annotation(k, v string) *PodBuilder {
	if b.pod.Annotations == nil {
		b.pod.Annotations = map[string]string{}
	}
	b.pod.Annotations[k] = v
	return b
}

// Request sets the container's request.
func (b *PodBuilder) Request(name corev1.ResourceName, q string) *PodBuilder {
	setRequest(&b.pod.Spec, name, q)
	return b
}

// Obj returns the Pod.
func (b *PodBuilder) Obj() *corev1.Pod { return b.pod.DeepCopy() }

// Group puts the Pod in pod group name of total Pods, under Muster's keys.
func (b *PodBuilder) Group(name string, total int) *PodBuilder {
	return b.Label("muster.dev/pod-group-name", name).Annotation("muster.dev/pod-group-total-count", strconv.Itoa(total))
}
