// Package trainjob adapts Kubeflow Trainer v2's TrainJob to Muster's generic
// job machinery. A TrainJob names a training runtime (a ClusterTrainingRuntime
// or a namespaced TrainingRuntime) whose JobSet template the trainer
// controller fills from the TrainJob; Muster reads the same runtime to know
// the pods before they exist: one pod set per replicated job, admitted
// whole. The placement goes into the TrainJob's runtimePatches, under
// Muster's own manager, since the runtime is shared and the TrainJob's
// trainer is immutable; the JobSet the controller makes is the TrainJob's
// part (jobframework.Options.ParentKinds), never gated again.
package trainjob

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// +kubebuilder:webhook:path=/mutate-trainer-kubeflow-org-v1alpha1-trainjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainjobs,verbs=create,versions=v1alpha1,name=mtrainjob.muster.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-trainjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainjobs,verbs=create;update,versions=v1alpha1,name=vtrainjob.muster.dev,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/status,verbs=get
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainingruntimes;clustertrainingruntimes,verbs=get;list;watch

// Manager is the manager of the runtime patch that carries Muster's
// placement (Kueue's is kueue.x-k8s.io/manager).
const Manager = "muster.dev/manager"

// The trainer's API (github.com/kubeflow/trainer/v2, v2.2.1). Its Go types
// cannot be compiled against the k8s.io/api Muster builds with (their
// OpenAPI file names core/v1 types since removed), so TrainJobs are read
// and written unstructured, every field Muster does not know kept as the
// user wrote it, and read through the views in api.go.
var (
	GroupVersion = schema.GroupVersion{Group: "trainer.kubeflow.org", Version: "v1alpha1"}
	gvk          = GroupVersion.WithKind("TrainJob")
)

const (
	trainingRuntimeKind        = "TrainingRuntime"
	clusterTrainingRuntimeKind = "ClusterTrainingRuntime"
	conditionComplete          = "Complete"
	conditionFailed            = "Failed"
)

// Kind is TrainJob for the job framework; controllers/jobs registers it.
var Kind = jobframework.Kind[*unstructured.Unstructured]{
	Framework:   "trainer.kubeflow.org/trainjob",
	GVK:         gvk,
	AddToScheme: addToScheme,
	CRD: &jobframework.CRDSource{Module: "github.com/kubeflow/trainer/v2", Version: "v2.2.1", Path: "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml",
		Related: []string{
			"manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml",
			"manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml",
		}},
	New: func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u
	},
	Adapt: func(u *unstructured.Unstructured) jobframework.GenericJob { return &Job{obj: u} },
	// Its pods are a JobSet's: numbered within their child Job, each child
	// Job numbered within its replicated job.
	PodIndexLabel:      batchv1.JobCompletionIndexAnnotation,
	SubGroupIndexLabel: jobsetv1alpha2.JobIndexKey,
	// EnabledByDefault stays false: a kind added after the first release
	// is opt-in (docs/job-kinds.md).
	MultiCluster: jobframework.ManagedByAt(musterv1beta1.KueueMultiKueueManagedBy, "spec", "managedBy"),
}

// addToScheme registers TrainJob as unstructured: the manager's webhook
// and reconciler setup look the kind up in the scheme, and the scheme
// gives unstructured objects the kind they declare.
func addToScheme(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	return nil
}

// Job is a TrainJob as a GenericJob, with the runtime it names once
// LoadRelated read it.
type Job struct {
	obj     *unstructured.Unstructured
	runtime *runtimeSpec
	// pods are its replicated jobs without Muster's placement, rendered
	// once: Muster writes only its own patch and suspend, which they do
	// not read.
	pods []replicatedJob
}

var (
	_ jobframework.GenericJob            = (*Job)(nil)
	_ jobframework.JobWithRelatedObjects = (*Job)(nil)
	_ jobframework.JobWithValidation     = (*Job)(nil)
	_ jobframework.JobWithTemplateLock   = (*Job)(nil)
	_ jobframework.JobWithSubGroups      = (*Job)(nil)
)

func (j *Job) Object() client.Object { return j.obj }

func (j *Job) IsSuspended() bool {
	s, _, _ := unstructured.NestedBool(j.obj.Object, "spec", "suspend")
	return s
}

func (j *Job) Suspend() { j.setSuspend(true) }

func (j *Job) setSuspend(s bool) {
	_ = unstructured.SetNestedField(j.obj.Object, s, "spec", "suspend")
}

// LoadRelated reads the runtime the TrainJob names. One that does not
// exist is a NotFound error saying which and what to do.
func (j *Job) LoadRelated(ctx context.Context, r client.Reader) error {
	v := j.view()
	if v.runtimeGroup() != GroupVersion.Group {
		return nil // refused by ValidateQueued; nothing to read
	}
	kind := v.runtimeKind()
	if kind != clusterTrainingRuntimeKind && kind != trainingRuntimeKind {
		return nil // refused by ValidateQueued
	}
	rt := &unstructured.Unstructured{}
	rt.SetGroupVersionKind(GroupVersion.WithKind(kind))
	key := client.ObjectKey{Name: v.Spec.RuntimeRef.Name}
	if kind == trainingRuntimeKind {
		key.Namespace = j.obj.GetNamespace()
	}
	if err := r.Get(ctx, key, rt); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("spec.runtimeRef: %s %q does not exist: create it before the TrainJob: %w", kind, key.Name, err)
		}
		return err
	}
	spec, err := parseRuntime(rt)
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", kind, key.Name, err)
	}
	j.runtime, j.pods = spec, nil
	return nil
}

// ValidateQueued refuses a runtime reference the trainer cannot run.
func (j *Job) ValidateQueued() field.ErrorList {
	v := j.view()
	ref := field.NewPath("spec", "runtimeRef")
	if g := v.runtimeGroup(); g != GroupVersion.Group {
		return field.ErrorList{field.NotSupported(ref.Child("apiGroup"), g, []string{GroupVersion.Group})}
	}
	if k := v.runtimeKind(); k != clusterTrainingRuntimeKind && k != trainingRuntimeKind {
		return field.ErrorList{field.NotSupported(ref.Child("kind"), k, []string{clusterTrainingRuntimeKind, trainingRuntimeKind})}
	}
	return nil
}

// PodSets: one per replicated job of the JobSet the trainer controller
// will make, its pods as they will be. Nothing before the runtime is
// loaded.
func (j *Job) PodSets() []musterv1beta1.PodSet {
	jobs, err := j.rendered(false)
	if err != nil {
		return nil
	}
	out := make([]musterv1beta1.PodSet, 0, len(jobs))
	for _, rj := range jobs {
		out = append(out, musterv1beta1.PodSet{Name: rj.name, Count: rj.replicas * rj.pods, Template: *rj.template.DeepCopy()})
	}
	return out
}

// SubGroups: a replicated job's child Jobs.
func (j *Job) SubGroups(podSet string) int32 {
	if rj := j.find(podSet, false); rj != nil {
		return rj.replicas
	}
	return 0
}

// Rendered is the pod template the named replicated job's pods will have,
// Muster's placement included; nil if there is none.
func (j *Job) Rendered(podSet string) *corev1.PodTemplateSpec {
	if rj := j.find(podSet, true); rj != nil {
		return &rj.template
	}
	return nil
}

func (j *Job) find(podSet string, withOwn bool) *replicatedJob {
	jobs, err := j.rendered(withOwn)
	if err != nil {
		return nil
	}
	for i := range jobs {
		if jobs[i].name == podSet {
			return &jobs[i]
		}
	}
	return nil
}

// Finished: the trainer's terminal conditions, which it copies from its
// JobSet's (a JobSet restarting under its failure policy is not finished).
func (j *Job) Finished() (string, bool, bool) {
	conds := j.view().Status.Conditions
	for _, t := range []string{conditionComplete, conditionFailed} {
		if c := meta.FindStatusCondition(conds, t); c != nil && c.Status == "True" {
			return c.Message, t == conditionComplete, true
		}
	}
	return "", false, false
}

// PodsReady: every child Job of every replicated job is ready or done.
func (j *Job) PodsReady() bool {
	jobs, err := j.rendered(false)
	if err != nil {
		return false
	}
	var want, have int32
	for _, rj := range jobs {
		want += rj.replicas
	}
	for _, st := range j.view().Status.JobsStatus {
		have += ptr.Deref(st.Ready, 0) + ptr.Deref(st.Succeeded, 0)
	}
	return have >= want
}

// IsActive: some child Job still has pods running.
func (j *Job) IsActive() bool {
	for _, st := range j.view().Status.JobsStatus {
		if ptr.Deref(st.Active, 0) > 0 {
			return true
		}
	}
	return false
}

// TemplateLocked: the trainer's webhook refuses a runtime patch change
// while the TrainJob's JobSet has active Jobs, even suspended.
func (j *Job) TemplateLocked() bool { return j.IsActive() }

// RuntimeTemplates are the loaded runtime's pod templates, in replicated
// job order, before the TrainJob's changes: tests that treat every kind
// alike edit them as they edit another kind's templates, before they ask
// for its pod sets.
func (j *Job) RuntimeTemplates() []*corev1.PodTemplateSpec {
	if j.runtime == nil {
		return nil
	}
	j.pods = nil // edited: rendered again
	out := make([]*corev1.PodTemplateSpec, 0, len(j.runtime.Template.Spec.ReplicatedJobs))
	for i := range j.runtime.Template.Spec.ReplicatedJobs {
		out = append(out, &j.runtime.Template.Spec.ReplicatedJobs[i].Template.Spec.Template)
	}
	return out
}

// Loaded is the TrainJob obj with its runtime rt read already, as
// LoadRelated reads it.
func Loaded(obj, rt *unstructured.Unstructured) (*Job, error) {
	spec, err := parseRuntime(rt)
	if err != nil {
		return nil, err
	}
	return &Job{obj: obj, runtime: spec}, nil
}
