// Package job adapts batch/v1 Job to Muster's generic job machinery.
package job

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// +kubebuilder:webhook:path=/mutate-batch-v1-job,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch,resources=jobs,verbs=create,versions=v1,name=mjob.muster.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-batch-v1-job,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch,resources=jobs,verbs=create;update,versions=v1,name=vjob.muster.dev,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get;update;patch

// Kind is batch/v1 Job for the job framework; controllers/jobs registers it.
var Kind = jobframework.Kind[*batchv1.Job]{
	Framework: "batch/job",
	// On by default since the first release, like the other two kinds.
	EnabledByDefault: true,
	GVK:              batchv1.SchemeGroupVersion.WithKind("Job"),
	AddToScheme:      batchv1.AddToScheme,
	New:              func() *batchv1.Job { return &batchv1.Job{} },
	Adapt:            func(j *batchv1.Job) jobframework.GenericJob { return (*Job)(j) },
	PodIndexLabel:    batchv1.JobCompletionIndexAnnotation,
	MultiCluster: &jobframework.MultiCluster{
		ManagedByPath: []string{"spec", "managedBy"},
		ManagedBy:     musterv1beta1.MultiClusterManagedBy,
		CleanCopy:     cleanCopy,
	},
}

// Job is a batch/v1 Job as a GenericJob. It has one pod set, "main".
type Job batchv1.Job

var (
	_ jobframework.GenericJob         = (*Job)(nil)
	_ jobframework.JobWithStopCleanup = (*Job)(nil)
	_ jobframework.JobWithValidation  = (*Job)(nil)
)

func (j *Job) Object() client.Object { return (*batchv1.Job)(j) }

func (j *Job) IsSuspended() bool { return ptr.Deref(j.Spec.Suspend, false) }

func (j *Job) Suspend() { j.Spec.Suspend = ptr.To(true) }

// podCount is how many pods run at once: parallelism, capped by
// completions when fewer remain to run.
func (j *Job) podCount() int32 {
	n := ptr.Deref(j.Spec.Parallelism, 1)
	if c := j.Spec.Completions; c != nil && *c < n {
		n = *c
	}
	return n
}

// podSetName is a Job's one pod set, as Kueue names it.
const podSetName = "main"

func (j *Job) PodSets() []musterv1beta1.PodSet {
	ps := musterv1beta1.PodSet{
		Name:     podSetName,
		Count:    j.podCount(),
		Template: *j.Spec.Template.DeepCopy(),
	}
	if n, ok, err := jobframework.MinParallelism(j.Object()); ok && err == nil && n < ps.Count {
		ps.MinCount = ptr.To(n)
	}
	return []musterv1beta1.PodSet{ps}
}

// ValidateQueued refuses a job-min-parallelism that is not a count of pods
// the Job could run with.
func (j *Job) ValidateQueued() field.ErrorList {
	n, ok, err := jobframework.MinParallelism(j.Object())
	key := jobframework.MinParallelismKey(j.Object())
	path := field.NewPath("metadata", "annotations").Key(key)
	switch {
	case !ok:
		return nil
	case err != nil:
		return field.ErrorList{field.Invalid(path, j.GetAnnotations()[key], err.Error())}
	case n > ptr.Deref(j.Spec.Parallelism, 1):
		return field.ErrorList{field.Invalid(path, n, fmt.Sprintf("must not exceed the parallelism (%d)", ptr.Deref(j.Spec.Parallelism, 1)))}
	}
	return nil
}

func (j *Job) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	if len(infos) != 1 || infos[0].Name != podSetName {
		return fmt.Errorf("a Job has one pod set, %q; got %d", podSetName, len(infos))
	}
	if err := infos[0].Merge(&j.Spec.Template); err != nil {
		return err
	}
	j.startWith(infos[0].Count)
	j.Spec.Suspend = ptr.To(false)
	return nil
}

func (j *Job) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	if len(infos) != 1 {
		return false
	}
	changed := jobframework.RestoreCount(j.Object(), "parallelism", &j.Spec.Parallelism)
	changed = jobframework.RestoreCount(j.Object(), "completions", &j.Spec.Completions) || changed
	return infos[0].Restore(&j.Spec.Template) || changed
}

// completionsFollowParallelismAnnotation (or Kueue's spelling) says that
// an Indexed Job's completions are its parallelism: a partial admission
// scales both. Without it the completions stay, run by fewer pods at once:
// an index is work, and dropping some would finish the Job with it undone.
const completionsFollowParallelismAnnotation = "muster.dev/job-completions-equal-parallelism"

// startWith runs the Job with n pods at once when admitted with fewer than
// it asks (partial admission); SetCount remembers what it replaced.
func (j *Job) startWith(n int32) {
	if n <= 0 || n == j.podCount() {
		return
	}
	if j.completionsFollowParallelism() {
		jobframework.SetCount(j.Object(), "completions", &j.Spec.Completions, n)
	}
	jobframework.SetCount(j.Object(), "parallelism", &j.Spec.Parallelism, n)
}

func (j *Job) completionsFollowParallelism() bool {
	on := j.Annotations[completionsFollowParallelismAnnotation] == "true" ||
		j.Annotations[musterv1beta1.KueuePrefix+"job-completions-equal-parallelism"] == "true"
	return on && j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion &&
		j.Spec.Completions != nil && *j.Spec.Completions == ptr.Deref(j.Spec.Parallelism, 1)
}

func (j *Job) Finished() (string, bool, bool) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return c.Message, true, true
		case batchv1.JobFailed:
			return c.Message, false, true
		}
	}
	return "", false, false
}

func (j *Job) PodsReady() bool {
	return ptr.Deref(j.Status.Ready, 0)+j.Status.Succeeded >= j.podCount()
}

func (j *Job) IsActive() bool { return j.Status.Active > 0 }

// PodFailuresTolerated is what is left of the Job's backoffLimit (6 by
// default): each pod lost on a failed node counts as a failure, unless a
// podFailurePolicy ignores disruptions (DisruptionTarget), and past the
// limit the Job fails. A Job with a backoffLimitPerIndex fails an index,
// not the Job, and has no such bound.
func (j *Job) PodFailuresTolerated() (int32, bool) {
	if j.Spec.BackoffLimitPerIndex != nil || j.ignoresDisruptions() {
		return 0, false
	}
	return max(0, ptr.Deref(j.Spec.BackoffLimit, 6)-j.Status.Failed), true
}

// ignoresDisruptions reports whether a podFailurePolicy rule ignores pods
// that fail by disruption (a node lost, an eviction).
func (j *Job) ignoresDisruptions() bool {
	if j.Spec.PodFailurePolicy == nil {
		return false
	}
	for _, rule := range j.Spec.PodFailurePolicy.Rules {
		if rule.Action != batchv1.PodFailurePolicyActionIgnore {
			continue
		}
		for _, c := range rule.OnPodConditions {
			if c.Type == corev1.DisruptionTarget {
				return true
			}
		}
	}
	return false
}

// PodsToRun is what the Job still runs at once: its parallelism, until
// fewer completions remain (then the Job creates no more pods than that).
// A Job without completions (a work queue) creates no pod after its first
// success, and keeps its count.
func (j *Job) PodsToRun() []int32 {
	n := j.podCount()
	if j.Spec.Completions != nil {
		n = min(n, max(1, *j.Spec.Completions-j.Status.Succeeded))
	}
	return []int32{n}
}

// TemplateLocked: the API server accepts a suspended Job's new pod
// placement only once it has no active pods (and it has not started, or
// says it is suspended).
func (j *Job) TemplateLocked() bool { return j.Status.Active > 0 }

// ClearStatusOnStop resets startTime: the Job controller accepts a new pod
// placement only for a Job that has not started, and counts
// activeDeadlineSeconds from startTime.
func (j *Job) ClearStatusOnStop() bool {
	if j.Status.StartTime == nil {
		return false
	}
	j.Status.StartTime = nil
	return true
}

// cleanCopy takes out of a worker's copy of a Job what the manager's API
// server generated for it: the selector and the pod template's labels
// naming the manager's Job UID. The worker's API server generates its own,
// and refuses a selector that does not match them.
func cleanCopy(job *unstructured.Unstructured) {
	unstructured.RemoveNestedField(job.Object, "spec", "selector")
	for _, l := range []string{batchv1.ControllerUidLabel, "controller-uid", "job-name"} {
		unstructured.RemoveNestedField(job.Object, "spec", "template", "metadata", "labels", l)
	}
}
