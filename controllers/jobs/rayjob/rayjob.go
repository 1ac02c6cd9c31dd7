// Package rayjob adapts KubeRay's RayJob to Muster's generic job
// machinery: the RayJob is admitted whole — the head, each worker group of
// the cluster it creates and, when KubeRay submits the job from a
// Kubernetes Job, that submitter — and the cluster and submitter it creates
// are its parts (jobframework.Options.ParentKinds), never gated again.
package rayjob

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs/raycluster"
)

// +kubebuilder:webhook:path=/mutate-ray-io-v1-rayjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayjobs,verbs=create,versions=v1,name=mrayjob.muster.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-ray-io-v1-rayjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayjobs,verbs=create;update,versions=v1,name=vrayjob.muster.dev,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs/status,verbs=get

// submitterPodSet is the pod set of the Kubernetes Job that submits the
// Ray job (submissionMode K8sJobMode, KubeRay's default).
const submitterPodSet = "submitter"

// Kind is RayJob for the job framework; controllers/jobs registers it.
var Kind = jobframework.Kind[*rayv1.RayJob]{
	Framework:   "ray.io/rayjob",
	GVK:         rayv1.GroupVersion.WithKind("RayJob"),
	AddToScheme: rayv1.AddToScheme,
	CRD:         &jobframework.CRDSource{Module: "github.com/ray-project/kuberay/ray-operator", Path: "config/crd/bases/ray.io_rayjobs.yaml"},
	New:         func() *rayv1.RayJob { return &rayv1.RayJob{} },
	Adapt:       func(j *rayv1.RayJob) jobframework.GenericJob { return (*Job)(j) },
	// EnabledByDefault stays false: a kind added after the first release
	// is opt-in (docs/job-kinds.md).
	MultiCluster: jobframework.ManagedByAt(musterv1beta1.KueueMultiKueueManagedBy, "spec", "managedBy"),
}

// Job is a RayJob as a GenericJob.
type Job rayv1.RayJob

var _ jobframework.GenericJob = (*Job)(nil)

func (j *Job) Object() client.Object { return (*rayv1.RayJob)(j) }

func (j *Job) IsSuspended() bool { return j.Spec.Suspend }

func (j *Job) Suspend() { j.Spec.Suspend = true }

// ValidateQueued refuses what Muster cannot admit whole, as Kueue does: a
// job on an existing cluster (clusterSelector) whose pods another
// admission holds, a job without a cluster of its own, a cluster kept after
// the job (its quota would never be released) and an autoscaling cluster.
func (j *Job) ValidateQueued() field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if len(j.Spec.ClusterSelector) > 0 {
		errs = append(errs, field.Invalid(spec.Child("clusterSelector"), j.Spec.ClusterSelector,
			"a RayJob in a Muster queue runs on a cluster of its own, admitted with it: "+
				"remove clusterSelector, or remove the queue label to run on an existing cluster (queue that RayCluster instead)"))
	}
	if j.Spec.RayClusterSpec == nil {
		if len(j.Spec.ClusterSelector) == 0 {
			errs = append(errs, field.Required(spec.Child("rayClusterSpec"), "a RayJob in a Muster queue needs the cluster it runs on"))
		}
		return errs
	}
	if !j.Spec.ShutdownAfterJobFinishes {
		errs = append(errs, field.Invalid(spec.Child("shutdownAfterJobFinishes"), false,
			"a RayJob in a Muster queue must delete its cluster when it finishes, so that its quota is released: set shutdownAfterJobFinishes to true"))
	}
	return append(errs, raycluster.ValidateFixedSize(j.Spec.RayClusterSpec, spec.Child("rayClusterSpec"), "RayJob's cluster")...)
}

// submitsFromAJob reports whether KubeRay runs a submitter Job for the
// RayJob (K8sJobMode, also when the mode is left empty: the CRD's default).
func (j *Job) submitsFromAJob() bool {
	return j.Spec.SubmissionMode == "" || j.Spec.SubmissionMode == rayv1.K8sJobMode
}

func (j *Job) PodSets() []musterv1beta1.PodSet {
	if j.Spec.RayClusterSpec == nil {
		return nil
	}
	out := raycluster.PodSets(j.Spec.RayClusterSpec, false)
	if j.Spec.SubmissionMode == rayv1.SidecarMode {
		// The submitter runs as a container of the head pod.
		head := &out[0].Template.Spec
		head.Containers = append(head.Containers, defaultSubmitter(j.headImage()))
	}
	if j.submitsFromAJob() {
		out = append(out, musterv1beta1.PodSet{Name: submitterPodSet, Count: 1, Template: *j.submitterTemplate()})
	}
	return out
}

// submitterTemplate is the user's submitter template, or the one KubeRay
// would build when none is given.
func (j *Job) submitterTemplate() *corev1.PodTemplateSpec {
	if j.Spec.SubmitterPodTemplate != nil {
		return j.Spec.SubmitterPodTemplate.DeepCopy()
	}
	return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{defaultSubmitter(j.headImage())},
	}}
}

func (j *Job) headImage() string {
	if cs := j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers; len(cs) > 0 {
		return cs[0].Image
	}
	return ""
}

// defaultSubmitter is KubeRay's submitter container when the RayJob gives
// none (ray-operator common.GetDefaultSubmitterContainer): what the quota
// must count for it. Copied, as Kueue does, rather than imported: that
// package pulls KubeRay's controller dependencies (OpenShift routes, the
// Gateway API, test helpers) into the manager.
func defaultSubmitter(image string) corev1.Container {
	return corev1.Container{
		Name:  "ray-job-submitter",
		Image: image,
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("200Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		},
	}
}

// template is the pod template of a pod set. A submitter without a
// template of its own gets KubeRay's default written into the RayJob, so
// that the placement applies to the Job KubeRay builds from it.
func (j *Job) template(podSet string) *corev1.PodTemplateSpec {
	if podSet == submitterPodSet {
		if j.Spec.SubmitterPodTemplate == nil {
			j.Spec.SubmitterPodTemplate = j.submitterTemplate()
		}
		return j.Spec.SubmitterPodTemplate
	}
	if j.Spec.RayClusterSpec == nil {
		return nil
	}
	return raycluster.Template(j.Spec.RayClusterSpec, podSet)
}

func (j *Job) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	for i := range infos {
		t := j.template(infos[i].Name)
		if t == nil {
			return fmt.Errorf("RayJob %s has no group for pod set %s", j.Name, infos[i].Name)
		}
		if err := infos[i].Merge(t); err != nil {
			return err
		}
	}
	j.Spec.Suspend = false
	return nil
}

func (j *Job) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	changed := false
	for i := range infos {
		if infos[i].Name == submitterPodSet && j.Spec.SubmitterPodTemplate == nil {
			continue
		}
		if t := j.template(infos[i].Name); t != nil {
			changed = infos[i].Restore(t) || changed
		}
	}
	return changed
}

// Finished: KubeRay's deployment status says the job is over; whether it
// succeeded is the Ray job's own status.
func (j *Job) Finished() (string, bool, bool) {
	switch j.Status.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed:
		return j.Status.Message, j.Status.JobStatus == rayv1.JobStatusSucceeded, true
	}
	return "", false, false
}

// PodsReady: the RayJob's cluster is ready (KubeRay copies its status into
// the RayJob once it reaches the Ray dashboard).
func (j *Job) PodsReady() bool {
	return j.Status.RayClusterStatus.State == rayv1.Ready //nolint:staticcheck // the state KubeRay v1.5 still sets, see raycluster.PodsReady
}

// IsActive: KubeRay has started deploying the job and not yet taken it
// down.
func (j *Job) IsActive() bool {
	switch j.Status.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusNew, rayv1.JobDeploymentStatusSuspended:
		return false
	}
	return true
}
