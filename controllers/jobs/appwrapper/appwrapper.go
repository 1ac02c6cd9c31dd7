// Package appwrapper adapts CodeFlare's AppWrapper to Muster's generic job
// machinery: an AppWrapper bundles the resources of one application (Jobs,
// PyTorchJobs, RayClusters, Pods...), and is admitted whole, one pod set
// per pod template its components declare or the AppWrapper library infers
// for a known kind. The placement is handed to the AppWrapper controller
// in each component's podSetInfos, which it applies to the resources it
// creates once resumed; those resources are the AppWrapper's parts
// (jobframework.Options.ParentKinds), never gated again.
package appwrapper

import (
	"fmt"
	"slices"
	"strings"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	awutils "github.com/project-codeflare/appwrapper/pkg/utils"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// +kubebuilder:webhook:path=/mutate-workload-codeflare-dev-v1beta2-appwrapper,mutating=true,failurePolicy=fail,sideEffects=None,groups=workload.codeflare.dev,resources=appwrappers,verbs=create,versions=v1beta2,name=mappwrapper.muster.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-workload-codeflare-dev-v1beta2-appwrapper,mutating=false,failurePolicy=fail,sideEffects=None,groups=workload.codeflare.dev,resources=appwrappers,verbs=create;update,versions=v1beta2,name=vappwrapper.muster.dev,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=workload.codeflare.dev,resources=appwrappers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=workload.codeflare.dev,resources=appwrappers/status,verbs=get

// Kind is AppWrapper for the job framework; controllers/jobs registers it.
var Kind = jobframework.Kind[*awv1beta2.AppWrapper]{
	Framework:   "workload.codeflare.dev/appwrapper",
	GVK:         awv1beta2.GroupVersion.WithKind("AppWrapper"),
	AddToScheme: awv1beta2.AddToScheme,
	CRD:         &jobframework.CRDSource{Module: "github.com/project-codeflare/appwrapper", Path: "config/crd/bases/workload.codeflare.dev_appwrappers.yaml"},
	New:         func() *awv1beta2.AppWrapper { return &awv1beta2.AppWrapper{} },
	Adapt:       func(a *awv1beta2.AppWrapper) jobframework.GenericJob { return (*Job)(a) },
	// EnabledByDefault stays false: a kind added after the first release
	// is opt-in (docs/job-kinds.md).
	MultiCluster: jobframework.ManagedByAt(musterv1beta1.KueueMultiKueueManagedBy, "spec", "managedBy"),
}

// Job is an AppWrapper as a GenericJob.
type Job awv1beta2.AppWrapper

var (
	_ jobframework.GenericJob        = (*Job)(nil)
	_ jobframework.JobWithValidation = (*Job)(nil)
)

func (j *Job) Object() client.Object { return (*awv1beta2.AppWrapper)(j) }

func (j *Job) IsSuspended() bool { return j.Spec.Suspend }

func (j *Job) Suspend() { j.Spec.Suspend = true }

// templates are the pod sets of every component's pod templates, in
// order; the library infers a component's pod sets from its kind when it
// declares none.
func (j *Job) templates() ([]musterv1beta1.PodSet, error) {
	// The library caches its inference in the status; a copy keeps the
	// object the reconciler writes as it was read.
	aw := (*awv1beta2.AppWrapper)(j).DeepCopy()
	tmpls, podSets, err := awutils.GetComponentPodSpecs(aw)
	if err != nil {
		return nil, err
	}
	out := make([]musterv1beta1.PodSet, 0, len(tmpls))
	for i := range tmpls {
		out = append(out, musterv1beta1.PodSet{Name: fmt.Sprintf("%s-%d", j.Name, i), Count: awutils.Replicas(podSets[i]), Template: *tmpls[i]})
	}
	return out, nil
}

// PodSets: one per pod template of each component, named as Kueue names
// them (<appwrapper>-<index>).
func (j *Job) PodSets() []musterv1beta1.PodSet {
	ps, err := j.templates()
	if err != nil {
		return nil
	}
	return ps
}

// ValidateQueued refuses a component whose pods Muster cannot read: a
// template that is not an object of a kind, or a pod set path that leads
// to no pod template.
func (j *Job) ValidateQueued() field.ErrorList {
	components := field.NewPath("spec", "components")
	if len(j.Spec.Components) == 0 {
		return field.ErrorList{field.Required(components, "an AppWrapper in a Muster queue needs a component with pods")}
	}
	// Read as the spec says, not as the controller last inferred it.
	aw := (*awv1beta2.AppWrapper)(j).DeepCopy()
	aw.Status.ComponentStatus = nil
	tmpls, _, err := awutils.GetComponentPodSpecs(aw)
	if err != nil {
		return field.ErrorList{field.Invalid(components, "", "cannot read the components' pod sets: "+err.Error())}
	}
	want := 0
	var paths []string
	for _, cs := range aw.Status.ComponentStatus {
		want += len(cs.PodSets)
		for _, p := range cs.PodSets {
			paths = append(paths, p.Path)
		}
	}
	if len(tmpls) != want {
		return field.ErrorList{field.Invalid(components, strings.Join(paths, ", "), "a pod set path leads to no pod template")}
	}
	if want == 0 {
		return field.ErrorList{field.Required(components, "no component has pods Muster can see: declare podSets with the path of each pod template")}
	}
	return nil
}

// RunWithPodSetsInfo hands each pod set's placement to the AppWrapper
// controller, which puts it on the resources it creates, and resumes.
func (j *Job) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	ps, err := j.templates()
	if err != nil {
		return err
	}
	aw := make([]awv1beta2.AppWrapperPodSetInfo, len(ps))
	for _, info := range infos {
		i := slices.IndexFunc(ps, func(p musterv1beta1.PodSet) bool { return p.Name == info.Name })
		if i < 0 {
			return fmt.Errorf("AppWrapper %s has no pod set %s", j.Name, info.Name)
		}
		t := ps[i].Template.DeepCopy()
		t.Labels, t.Annotations, t.Spec.NodeSelector, t.Spec.Tolerations, t.Spec.SchedulingGates = nil, nil, nil, nil, nil
		if err := info.Merge(t); err != nil {
			return err
		}
		aw[i] = awv1beta2.AppWrapperPodSetInfo{Labels: t.Labels, Annotations: t.Annotations, NodeSelector: t.Spec.NodeSelector,
			Tolerations: t.Spec.Tolerations, SchedulingGates: t.Spec.SchedulingGates}
	}
	// On a copy: the library caches its inference in the status, which is
	// the controller's to write.
	placed := (*awv1beta2.AppWrapper)(j).DeepCopy()
	if err := awutils.SetPodSetInfos(placed, aw); err != nil {
		return err
	}
	j.Spec.Components = placed.Spec.Components
	j.Spec.Suspend = false
	return nil
}

// RestorePodSetsInfo drops the placement handed to the controller.
func (j *Job) RestorePodSetsInfo([]jobframework.PodSetInfo) bool {
	changed := false
	for i := range j.Spec.Components {
		changed = changed || len(j.Spec.Components[i].PodSetInfos) > 0
		j.Spec.Components[i].PodSetInfos = nil
	}
	return changed
}

// Finished: the AppWrapper's phase; a failed one only once its resources
// are deleted, as Kueue waits for them.
func (j *Job) Finished() (string, bool, bool) {
	switch j.Status.Phase {
	case awv1beta2.AppWrapperSucceeded:
		return "AppWrapper finished successfully", true, true
	case awv1beta2.AppWrapperFailed:
		if !meta.IsStatusConditionTrue(j.Status.Conditions, string(awv1beta2.ResourcesDeployed)) {
			return "AppWrapper failed", false, true
		}
	}
	return "", false, false
}

// PodsReady: the controller's PodsReady condition.
func (j *Job) PodsReady() bool {
	return meta.IsStatusConditionTrue(j.Status.Conditions, string(awv1beta2.PodsReady))
}

// IsActive: the controller holds its resources deployed.
func (j *Job) IsActive() bool {
	return meta.IsStatusConditionTrue(j.Status.Conditions, string(awv1beta2.ResourcesDeployed))
}
