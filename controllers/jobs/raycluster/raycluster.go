// Package raycluster adapts KubeRay's RayCluster to Muster's generic job
// machinery: one pod set for the head, one per worker group.
package raycluster

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// +kubebuilder:webhook:path=/mutate-ray-io-v1-raycluster,mutating=true,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayclusters,verbs=create,versions=v1,name=mraycluster.muster.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-ray-io-v1-raycluster,mutating=false,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayclusters,verbs=create;update,versions=v1,name=vraycluster.muster.dev,admissionReviewVersions=v1
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters/status,verbs=get

// startedAnnotation marks a RayCluster Muster unsuspended. A RayCluster
// never finishes on its own; one that carries the mark and is suspended was
// suspended by its user, which ends its workload.
const startedAnnotation = "muster.dev/started"

const headPodSet = "head"

// Kind is RayCluster for the job framework; controllers/jobs registers it.
var Kind = jobframework.Kind[*rayv1.RayCluster]{
	Framework: "ray.io/raycluster",
	// On by default since the first release: without its CRD the kind
	// waits for it and costs nothing.
	EnabledByDefault: true,
	GVK:              rayv1.GroupVersion.WithKind("RayCluster"),
	AddToScheme:      rayv1.AddToScheme,
	CRD:              &jobframework.CRDSource{Module: "github.com/ray-project/kuberay/ray-operator", Path: "config/crd/bases/ray.io_rayclusters.yaml"},
	New:              func() *rayv1.RayCluster { return &rayv1.RayCluster{} },
	Adapt:            func(c *rayv1.RayCluster) jobframework.GenericJob { return (*Cluster)(c) },
	MultiCluster:     jobframework.ManagedByAt(musterv1beta1.KueueMultiKueueManagedBy, "spec", "managedBy"),
}

// Cluster is a RayCluster as a GenericJob.
type Cluster rayv1.RayCluster

var _ jobframework.GenericJob = (*Cluster)(nil)

func (c *Cluster) Object() client.Object { return (*rayv1.RayCluster)(c) }

func (c *Cluster) IsSuspended() bool { return ptr.Deref(c.Spec.Suspend, false) }

// Suspend suspends the cluster on Muster's behalf, dropping the started
// mark: only a suspension by the user keeps it.
func (c *Cluster) Suspend() {
	delete(c.Annotations, startedAnnotation)
	c.Spec.Suspend = ptr.To(true)
}

// ValidateQueued refuses what Muster cannot admit whole: an autoscaling
// RayCluster changes its worker count by itself, and every change would
// evict it to be admitted again at the new size (as in Kueue, which refuses
// it too unless elastic admission is on).
func (c *Cluster) ValidateQueued() field.ErrorList {
	return ValidateFixedSize(&c.Spec, field.NewPath("spec"), "RayCluster")
}

// ValidateFixedSize refuses a cluster spec that autoscales, for the kind
// named (a RayCluster, or the cluster of a RayJob).
func ValidateFixedSize(spec *rayv1.RayClusterSpec, path *field.Path, kind string) field.ErrorList {
	if ptr.Deref(spec.EnableInTreeAutoscaling, false) {
		return field.ErrorList{field.Invalid(path.Child("enableInTreeAutoscaling"), true,
			"a "+kind+" in a Muster queue cannot autoscale: its quota is admitted for a fixed number of workers; "+
				"set enableInTreeAutoscaling to false or remove the queue label")}
	}
	return nil
}

func workerPodSet(group string) string { return "worker-" + strings.ToLower(group) }

// workers is the pod count of a worker group: replicas within [min, max],
// times the hosts per replica.
func workers(g *rayv1.WorkerGroupSpec) int32 {
	n := ptr.Deref(g.Replicas, ptr.Deref(g.MinReplicas, 0))
	if g.MinReplicas != nil && n < *g.MinReplicas {
		n = *g.MinReplicas
	}
	if g.MaxReplicas != nil && n > *g.MaxReplicas {
		n = *g.MaxReplicas
	}
	return n * max(g.NumOfHosts, 1)
}

func (c *Cluster) PodSets() []musterv1beta1.PodSet { return PodSets(&c.Spec, true) }

// PodSets are a cluster spec's pod sets: the head, then one per worker
// group. With partial, a single-host worker group that sets minReplicas may
// be admitted with as few workers.
func PodSets(spec *rayv1.RayClusterSpec, partial bool) []musterv1beta1.PodSet {
	out := []musterv1beta1.PodSet{{Name: headPodSet, Count: 1, Template: *spec.HeadGroupSpec.Template.DeepCopy()}}
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		ps := musterv1beta1.PodSet{Name: workerPodSet(g.GroupName), Count: workers(g), Template: *g.Template.DeepCopy()}
		if min := ptr.Deref(g.MinReplicas, 0); partial && g.NumOfHosts <= 1 && min >= 1 && min < ps.Count {
			// A worker group runs with as few as minReplicas workers: it
			// may be admitted with as few.
			ps.MinCount = ptr.To(min)
		}
		out = append(out, ps)
	}
	return out
}

// startWith gives a single-host worker group the admitted count of
// workers, when fewer than it asks (partial admission); SetCount
// remembers what it replaced.
func (c *Cluster) startWith(podSet string, g *rayv1.WorkerGroupSpec, n int32) {
	if n > 0 && g.NumOfHosts <= 1 && n != workers(g) {
		jobframework.SetCount(c.Object(), podSet, &g.Replicas, n)
	}
}

// workerGroup is the worker group of a pod set, or nil.
func (c *Cluster) workerGroup(podSet string) *rayv1.WorkerGroupSpec {
	return workerGroup(&c.Spec, podSet)
}

func workerGroup(spec *rayv1.RayClusterSpec, podSet string) *rayv1.WorkerGroupSpec {
	for i := range spec.WorkerGroupSpecs {
		if workerPodSet(spec.WorkerGroupSpecs[i].GroupName) == podSet {
			return &spec.WorkerGroupSpecs[i]
		}
	}
	return nil
}

func (c *Cluster) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	for i := range infos {
		spec := c.podTemplate(infos[i].Name)
		if spec == nil {
			return fmt.Errorf("RayCluster %s has no group for pod set %s", c.Name, infos[i].Name)
		}
		if err := infos[i].Merge(spec); err != nil {
			return err
		}
		if g := c.workerGroup(infos[i].Name); g != nil {
			c.startWith(infos[i].Name, g, infos[i].Count)
		}
	}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[startedAnnotation] = "true"
	c.Spec.Suspend = ptr.To(false)
	return nil
}

func (c *Cluster) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	_, changed := c.Annotations[startedAnnotation]
	delete(c.Annotations, startedAnnotation)
	for i := range infos {
		if spec := c.podTemplate(infos[i].Name); spec != nil {
			changed = infos[i].Restore(spec) || changed
		}
		if g := c.workerGroup(infos[i].Name); g != nil {
			changed = jobframework.RestoreCount(c.Object(), infos[i].Name, &g.Replicas) || changed
		}
	}
	return changed
}

func (c *Cluster) podTemplate(podSet string) *corev1.PodTemplateSpec {
	return Template(&c.Spec, podSet)
}

// Template is the pod template of one of a cluster spec's pod sets, or nil.
func Template(spec *rayv1.RayClusterSpec, podSet string) *corev1.PodTemplateSpec {
	if podSet == headPodSet {
		return &spec.HeadGroupSpec.Template
	}
	if g := workerGroup(spec, podSet); g != nil {
		return &g.Template
	}
	return nil
}

// Finished: a RayCluster runs until deleted. One that Muster started and
// its user then suspended is done with its quota.
func (c *Cluster) Finished() (string, bool, bool) {
	if _, started := c.Annotations[startedAnnotation]; started && c.IsSuspended() {
		return "RayCluster suspended by its user", true, true
	}
	return "", false, false
}

// PodsReady and IsActive read the status State, which KubeRay deprecates
// for its conditions: those are behind a feature gate an admin may turn off
// (RayClusterStatusConditions), and RayClusterProvisioned never turns False
// again, so it cannot say that pods stopped being ready. KubeRay v1.5 still
// sets State in every case.
func (c *Cluster) PodsReady() bool {
	return c.Status.State == rayv1.Ready //nolint:staticcheck // see above
}

// IsActive: workers still up. The head's pod name may linger in the status
// of a suspended cluster, so it is not a sign of activity.
func (c *Cluster) IsActive() bool {
	suspended := c.Status.State == rayv1.Suspended //nolint:staticcheck // see PodsReady
	return !suspended && (c.Status.ReadyWorkerReplicas > 0 || c.Status.AvailableWorkerReplicas > 0)
}
