// Package mpijob adapts Kubeflow's MPIJob (kubeflow.org/v2beta1, the MPI
// operator) to Muster's generic job machinery: a launcher and a worker pod
// set; the workers may be admitted partially, down to what
// runPolicy.schedulingPolicy.minAvailable leaves them.
package mpijob

import (
	"fmt"

	kfmpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v2beta1-mpijob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=mpijobs,verbs=create,versions=v2beta1,name=mmpijob.muster.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v2beta1-mpijob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=mpijobs,verbs=create;update,versions=v2beta1,name=vmpijob.muster.dev,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs/status,verbs=get

// Kind is MPIJob for the job framework; controllers/jobs registers it.
var Kind = jobframework.Kind[*kfmpi.MPIJob]{
	Framework:     "kubeflow.org/mpijob",
	GVK:           kfmpi.SchemeGroupVersionKind,
	AddToScheme:   kfmpi.AddToScheme,
	CRD:           &jobframework.CRDSource{Module: "github.com/kubeflow/mpi-operator", Path: "manifests/base/kubeflow.org_mpijobs.yaml"},
	New:           func() *kfmpi.MPIJob { return &kfmpi.MPIJob{} },
	Adapt:         func(j *kfmpi.MPIJob) jobframework.GenericJob { return (*Job)(j) },
	PodIndexLabel: kfmpi.ReplicaIndexLabel,
	// EnabledByDefault stays false: a kind added after the first release
	// is opt-in (docs/job-kinds.md).
	MultiCluster: jobframework.ManagedByAt(musterv1beta1.KueueMultiKueueManagedBy, "spec", "runPolicy", "managedBy"),
}

const (
	launcherPodSet = "launcher"
	workerPodSet   = "worker"
)

// Job is an MPIJob as a GenericJob.
type Job kfmpi.MPIJob

var (
	_ jobframework.GenericJob         = (*Job)(nil)
	_ jobframework.JobWithGangMinimum = (*Job)(nil)
)

func (j *Job) Object() client.Object { return (*kfmpi.MPIJob)(j) }

func (j *Job) IsSuspended() bool { return ptr.Deref(j.Spec.RunPolicy.Suspend, false) }

func (j *Job) Suspend() { j.Spec.RunPolicy.Suspend = ptr.To(true) }

// replica is the replica spec of a pod set.
func (j *Job) replica(podSet string) *kfmpi.ReplicaSpec {
	switch podSet {
	case launcherPodSet:
		return j.Spec.MPIReplicaSpecs[kfmpi.MPIReplicaTypeLauncher]
	case workerPodSet:
		return j.Spec.MPIReplicaSpecs[kfmpi.MPIReplicaTypeWorker]
	}
	return nil
}

// PodSets: the launcher, then the workers (an MPIJob may have none: the
// launcher runs alone). With runLauncherAsWorker the launcher is also a
// rank, still one pod of its own pod set.
func (j *Job) PodSets() []musterv1beta1.PodSet {
	var out []musterv1beta1.PodSet
	for _, name := range []string{launcherPodSet, workerPodSet} {
		spec := j.replica(name)
		if spec == nil {
			continue
		}
		ps := musterv1beta1.PodSet{Name: name, Count: ptr.Deref(spec.Replicas, 1), Template: *spec.Template.DeepCopy()}
		if min := j.minWorkers(); name == workerPodSet && min != nil && *min < ps.Count {
			ps.MinCount = min
		}
		out = append(out, ps)
	}
	return out
}

// minWorkers is the fewest workers the job runs with: its pod group's
// minAvailable less the launcher (the MPI operator's pod group counts both),
// nil when the job sets none or it leaves no worker.
func (j *Job) minWorkers() *int32 {
	sp := j.Spec.RunPolicy.SchedulingPolicy
	if sp == nil || sp.MinAvailable == nil || j.replica(launcherPodSet) == nil {
		return nil
	}
	if n := *sp.MinAvailable - 1; n >= 1 {
		return &n
	}
	return nil
}

// SetGangMinimum sets runPolicy.schedulingPolicy.minAvailable, which the MPI
// operator (--gang-scheduling) and KAI's podgrouper make the pod group's
// minimum from, to the admitted pod count, and its queue when the job names
// none.
func (j *Job) SetGangMinimum(pods int32, queue string) {
	sp := j.Spec.RunPolicy.SchedulingPolicy
	if sp == nil {
		sp = &kfmpi.SchedulingPolicy{}
		j.Spec.RunPolicy.SchedulingPolicy = sp
	}
	jobframework.SetGangPolicy(j.Object(), &sp.MinAvailable, &sp.Queue, pods, queue)
}

func (j *Job) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	for i := range infos {
		spec := j.replica(infos[i].Name)
		if spec == nil {
			return fmt.Errorf("MPIJob %s has no replica type for pod set %s", j.Name, infos[i].Name)
		}
		if n := infos[i].Count; infos[i].Name == workerPodSet && n > 0 && n != ptr.Deref(spec.Replicas, 1) {
			jobframework.SetCount(j.Object(), workerPodSet, &spec.Replicas, n)
		}
		if err := infos[i].Merge(&spec.Template); err != nil {
			return err
		}
	}
	j.Spec.RunPolicy.Suspend = ptr.To(false)
	return nil
}

func (j *Job) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	changed := false
	if sp := j.Spec.RunPolicy.SchedulingPolicy; sp != nil {
		changed = jobframework.RestoreGangPolicy(j.Object(), &sp.MinAvailable, &sp.Queue)
	}
	for i := range infos {
		spec := j.replica(infos[i].Name)
		if spec == nil {
			continue
		}
		changed = jobframework.RestoreCount(j.Object(), infos[i].Name, &spec.Replicas) || changed
		changed = infos[i].Restore(&spec.Template) || changed
	}
	return changed
}

func (j *Job) condition(t kfmpi.JobConditionType) *kfmpi.JobCondition {
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

func (j *Job) Finished() (string, bool, bool) {
	if c := j.condition(kfmpi.JobSucceeded); c != nil {
		return c.Message, true, true
	}
	if c := j.condition(kfmpi.JobFailed); c != nil {
		return c.Message, false, true
	}
	return "", false, false
}

// PodsReady: the operator reports the job Running once the launcher runs,
// which it starts after the workers are ready (launcherCreationPolicy
// WaitForWorkersReady) or beside them.
func (j *Job) PodsReady() bool { return j.condition(kfmpi.JobRunning) != nil }

func (j *Job) IsActive() bool {
	for _, s := range j.Status.ReplicaStatuses {
		if s != nil && s.Active > 0 {
			return true
		}
	}
	return false
}
