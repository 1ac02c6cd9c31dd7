// Package jobset adapts the Kubernetes JobSet to Muster's generic job
// machinery: one pod set per replicated job, admitted whole (a JobSet has no
// minimum), its child Jobs its parts (jobframework.Options.ParentKinds),
// never gated again.
package jobset

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// +kubebuilder:webhook:path=/mutate-jobset-x-k8s-io-v1alpha2-jobset,mutating=true,failurePolicy=fail,sideEffects=None,groups=jobset.x-k8s.io,resources=jobsets,verbs=create,versions=v1alpha2,name=mjobset.muster.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-jobset-x-k8s-io-v1alpha2-jobset,mutating=false,failurePolicy=fail,sideEffects=None,groups=jobset.x-k8s.io,resources=jobsets,verbs=create;update,versions=v1alpha2,name=vjobset.muster.dev,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets/status,verbs=get

// Kind is JobSet for the job framework; controllers/jobs registers it.
var Kind = jobframework.Kind[*jobsetv1alpha2.JobSet]{
	Framework:   "jobset.x-k8s.io/jobset",
	GVK:         jobsetv1alpha2.GroupVersion.WithKind("JobSet"),
	AddToScheme: jobsetv1alpha2.AddToScheme,
	CRD:         &jobframework.CRDSource{Module: "sigs.k8s.io/jobset", Path: "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"},
	New:         func() *jobsetv1alpha2.JobSet { return &jobsetv1alpha2.JobSet{} },
	Adapt:       func(j *jobsetv1alpha2.JobSet) jobframework.GenericJob { return (*Job)(j) },
	// A pod's index within its child Job, and its child Job's: the child
	// Jobs of a replicated job are placed one after the other, each its own
	// slice when the template asks for slices of a Job's parallelism.
	PodIndexLabel:      batchv1.JobCompletionIndexAnnotation,
	SubGroupIndexLabel: jobsetv1alpha2.JobIndexKey,
	// EnabledByDefault stays false: a kind added after the first release
	// is opt-in (docs/job-kinds.md).
	MultiCluster: jobframework.ManagedByAt(musterv1beta1.MultiClusterManagedBy, "spec", "managedBy"),
}

// Job is a JobSet as a GenericJob.
type Job jobsetv1alpha2.JobSet

var (
	_ jobframework.GenericJob       = (*Job)(nil)
	_ jobframework.JobWithSubGroups = (*Job)(nil)
)

func (j *Job) Object() client.Object { return (*jobsetv1alpha2.JobSet)(j) }

func (j *Job) IsSuspended() bool { return ptr.Deref(j.Spec.Suspend, false) }

func (j *Job) Suspend() { j.Spec.Suspend = ptr.To(true) }

// PodSets: each replicated job is a pod set of all its child Jobs' pods.
// The JobSet's own placement annotations (exclusive-topology, node-selector)
// stay in the templates for the JobSet controller to honour.
func (j *Job) PodSets() []musterv1beta1.PodSet {
	out := make([]musterv1beta1.PodSet, 0, len(j.Spec.ReplicatedJobs))
	for i := range j.Spec.ReplicatedJobs {
		rj := &j.Spec.ReplicatedJobs[i]
		out = append(out, musterv1beta1.PodSet{
			Name:     rj.Name,
			Count:    rj.Replicas * podsPerJob(&rj.Template.Spec),
			Template: *rj.Template.Spec.Template.DeepCopy(),
		})
	}
	return out
}

// podsPerJob is how many pods a child Job runs at once: its parallelism
// (1 when unset, as the Job API defaults it), never more than its
// completions.
func podsPerJob(spec *batchv1.JobSpec) int32 {
	n := ptr.Deref(spec.Parallelism, 1)
	if spec.Completions != nil && *spec.Completions < n {
		n = *spec.Completions
	}
	return n
}

// SubGroups: a replicated job's child Jobs, each numbering its pods from 0.
func (j *Job) SubGroups(podSet string) int32 {
	if rj := j.replicatedJob(podSet); rj != nil {
		return rj.Replicas
	}
	return 0
}

func (j *Job) replicatedJob(podSet string) *jobsetv1alpha2.ReplicatedJob {
	for i := range j.Spec.ReplicatedJobs {
		if j.Spec.ReplicatedJobs[i].Name == podSet {
			return &j.Spec.ReplicatedJobs[i]
		}
	}
	return nil
}

// RunWithPodSetsInfo places each replicated job's pod template. The JobSet
// webhook lets those fields change while the JobSet is suspended, and the
// JobSet controller carries them to the child Jobs it resumes.
func (j *Job) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	for i := range infos {
		rj := j.replicatedJob(infos[i].Name)
		if rj == nil {
			return fmt.Errorf("JobSet %s has no replicated job for pod set %s", j.Name, infos[i].Name)
		}
		if err := infos[i].Merge(&rj.Template.Spec.Template); err != nil {
			return err
		}
	}
	j.Spec.Suspend = ptr.To(false)
	return nil
}

func (j *Job) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	changed := false
	for i := range infos {
		if rj := j.replicatedJob(infos[i].Name); rj != nil {
			changed = infos[i].Restore(&rj.Template.Spec.Template) || changed
		}
	}
	return changed
}

// Finished: the JobSet controller's terminal conditions. A JobSet that
// restarts its child Jobs (failurePolicy) is not finished and keeps its
// admission.
func (j *Job) Finished() (string, bool, bool) {
	for _, t := range []jobsetv1alpha2.JobSetConditionType{jobsetv1alpha2.JobSetCompleted, jobsetv1alpha2.JobSetFailed} {
		if c := meta.FindStatusCondition(j.Status.Conditions, string(t)); c != nil && c.Status == "True" {
			return c.Message, t == jobsetv1alpha2.JobSetCompleted, true
		}
	}
	return "", false, false
}

// PodsReady: every child Job of every replicated job is ready or done (the
// JobSet controller counts a Job ready when its pods are).
func (j *Job) PodsReady() bool {
	for i := range j.Spec.ReplicatedJobs {
		rj := &j.Spec.ReplicatedJobs[i]
		st := j.status(rj.Name)
		if st == nil || st.Ready+st.Succeeded < rj.Replicas {
			return false
		}
	}
	return true
}

func (j *Job) status(name string) *jobsetv1alpha2.ReplicatedJobStatus {
	for i := range j.Status.ReplicatedJobsStatus {
		if j.Status.ReplicatedJobsStatus[i].Name == name {
			return &j.Status.ReplicatedJobsStatus[i]
		}
	}
	return nil
}

// IsActive: some child Job still has pods running.
func (j *Job) IsActive() bool {
	for _, st := range j.Status.ReplicatedJobsStatus {
		if st.Active > 0 {
			return true
		}
	}
	return false
}
