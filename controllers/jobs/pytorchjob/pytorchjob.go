// Package pytorchjob adapts Kubeflow's PyTorchJob to Muster's generic job
// machinery: one pod set per replica type (master, worker).
package pytorchjob

import (
	"fmt"
	"sort"
	"strings"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-pytorchjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=pytorchjobs,verbs=create,versions=v1,name=mpytorchjob.muster.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-pytorchjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=pytorchjobs,verbs=create;update,versions=v1,name=vpytorchjob.muster.dev,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs/status,verbs=get

// Kind is PyTorchJob for the job framework; controllers/jobs registers it.
var Kind = jobframework.Kind[*kftraining.PyTorchJob]{
	Framework: "kubeflow.org/pytorchjob",
	// On by default since the first release: without its CRD the kind
	// waits for it and costs nothing.
	EnabledByDefault: true,
	GVK:              kftraining.SchemeGroupVersion.WithKind(kftraining.PyTorchJobKind),
	AddToScheme:      kftraining.AddToScheme,
	CRD:              &jobframework.CRDSource{Module: "github.com/kubeflow/training-operator", Path: "manifests/base/crds/kubeflow.org_pytorchjobs.yaml"},
	New:              func() *kftraining.PyTorchJob { return &kftraining.PyTorchJob{} },
	Adapt:            func(j *kftraining.PyTorchJob) jobframework.GenericJob { return (*Job)(j) },
	PodIndexLabel:    kftraining.ReplicaIndexLabel,
	MultiCluster:     jobframework.ManagedByAt(musterv1beta1.KueueMultiKueueManagedBy, "spec", "runPolicy", "managedBy"),
}

// Job is a PyTorchJob as a GenericJob.
type Job kftraining.PyTorchJob

var (
	_ jobframework.GenericJob         = (*Job)(nil)
	_ jobframework.JobWithGangMinimum = (*Job)(nil)
)

func (j *Job) Object() client.Object { return (*kftraining.PyTorchJob)(j) }

func (j *Job) IsSuspended() bool { return ptr.Deref(j.Spec.RunPolicy.Suspend, false) }

func (j *Job) Suspend() { j.Spec.RunPolicy.Suspend = ptr.To(true) }

// replicaTypes lists the job's replica types: Master first, then the others
// by name, so pod set order is stable.
func (j *Job) replicaTypes() []kftraining.ReplicaType {
	types := make([]kftraining.ReplicaType, 0, len(j.Spec.PyTorchReplicaSpecs))
	for rt := range j.Spec.PyTorchReplicaSpecs {
		types = append(types, rt)
	}
	sort.Slice(types, func(a, b int) bool {
		if (types[a] == kftraining.PyTorchJobReplicaTypeMaster) != (types[b] == kftraining.PyTorchJobReplicaTypeMaster) {
			return types[a] == kftraining.PyTorchJobReplicaTypeMaster
		}
		return types[a] < types[b]
	})
	return types
}

func podSetName(rt kftraining.ReplicaType) string { return strings.ToLower(string(rt)) }

func (j *Job) PodSets() []musterv1beta1.PodSet {
	var out []musterv1beta1.PodSet
	for _, rt := range j.replicaTypes() {
		spec := j.Spec.PyTorchReplicaSpecs[rt]
		ps := musterv1beta1.PodSet{
			Name:     podSetName(rt),
			Count:    ptr.Deref(spec.Replicas, 1),
			Template: *spec.Template.DeepCopy(),
		}
		if min := j.minWorkers(); rt == kftraining.PyTorchJobReplicaTypeWorker && min != nil && *min < ps.Count {
			ps.MinCount = min
		}
		out = append(out, ps)
	}
	return out
}

// minWorkers is the fewest workers an elastic PyTorchJob runs with
// (elasticPolicy.minReplicas): its worker pod set may be admitted with as
// few.
func (j *Job) minWorkers() *int32 {
	if p := j.Spec.ElasticPolicy; p != nil && p.MinReplicas != nil && *p.MinReplicas >= 1 {
		return p.MinReplicas
	}
	return nil
}

// startWith gives a replica type the admitted count, when fewer than it
// asks (partial admission); SetCount remembers what it replaced.
func (j *Job) startWith(podSet string, spec *kftraining.ReplicaSpec, n int32) {
	if n > 0 && n != ptr.Deref(spec.Replicas, 1) {
		jobframework.SetCount(j.Object(), podSet, &spec.Replicas, n)
	}
}

// SetGangMinimum sets runPolicy.schedulingPolicy.minAvailable, which the
// training operator (--gang-scheduler-name) and KAI's podgrouper make the
// pod group's minimum from, to the admitted pod count; and its queue (the
// Volcano queue the operator's PodGroup goes to) when the job names none.
func (j *Job) SetGangMinimum(pods int32, queue string) {
	sp := j.Spec.RunPolicy.SchedulingPolicy
	if sp == nil {
		sp = &kftraining.SchedulingPolicy{}
		j.Spec.RunPolicy.SchedulingPolicy = sp
	}
	jobframework.SetGangPolicy(j.Object(), &sp.MinAvailable, &sp.Queue, pods, queue)
}

// restoreGangMinimum puts back the minAvailable (and queue)
// SetGangMinimum replaced.
func (j *Job) restoreGangMinimum() bool {
	sp := j.Spec.RunPolicy.SchedulingPolicy
	if sp == nil {
		return false
	}
	return jobframework.RestoreGangPolicy(j.Object(), &sp.MinAvailable, &sp.Queue)
}

func (j *Job) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	if err := j.eachPodSet(infos, func(info *jobframework.PodSetInfo, spec *kftraining.ReplicaSpec) error {
		j.startWith(info.Name, spec, info.Count)
		return info.Merge(&spec.Template)
	}); err != nil {
		return err
	}
	j.Spec.RunPolicy.Suspend = ptr.To(false)
	return nil
}

func (j *Job) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	changed := j.restoreGangMinimum()
	_ = j.eachPodSet(infos, func(info *jobframework.PodSetInfo, spec *kftraining.ReplicaSpec) error {
		changed = jobframework.RestoreCount(j.Object(), info.Name, &spec.Replicas) || changed
		changed = info.Restore(&spec.Template) || changed
		return nil
	})
	return changed
}

// eachPodSet applies f to the replica spec of every replica type with its
// info, matched by pod set name.
func (j *Job) eachPodSet(infos []jobframework.PodSetInfo, f func(*jobframework.PodSetInfo, *kftraining.ReplicaSpec) error) error {
	for i := range infos {
		spec := j.replicaSpec(infos[i].Name)
		if spec == nil {
			return fmt.Errorf("PyTorchJob %s has no replica type for pod set %s", j.Name, infos[i].Name)
		}
		if err := f(&infos[i], spec); err != nil {
			return err
		}
	}
	return nil
}

func (j *Job) replicaSpec(podSet string) *kftraining.ReplicaSpec {
	for rt, spec := range j.Spec.PyTorchReplicaSpecs {
		if podSetName(rt) == podSet {
			return spec
		}
	}
	return nil
}

func (j *Job) Finished() (string, bool, bool) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case kftraining.JobSucceeded:
			return c.Message, true, true
		case kftraining.JobFailed:
			return c.Message, false, true
		}
	}
	return "", false, false
}

// PodsReady is true once the operator reports the job Running: all its
// replicas are up.
func (j *Job) PodsReady() bool {
	for _, c := range j.Status.Conditions {
		if c.Type == kftraining.JobRunning && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func (j *Job) IsActive() bool {
	for _, s := range j.Status.ReplicaStatuses {
		if s != nil && s.Active > 0 {
			return true
		}
	}
	return false
}
