package jobframework

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/podrequests"
)

// +kubebuilder:rbac:groups="",resources=limitranges,verbs=get;list;watch
// +kubebuilder:rbac:groups=node.k8s.io,resources=runtimeclasses,verbs=get;list;watch

// podSetsOf is the job's pod sets with the requests, limits and overhead
// their pods will be admitted with (limits as missing requests, the
// namespace's LimitRange defaults, the RuntimeClass's overhead): the Workload
// records what the pods will really take, so that is what quota charges and
// what `kubectl get workload -o yaml` shows.
func (r *Reconciler[T]) podSetsOf(ctx context.Context, job GenericJob) ([]musterv1beta1.PodSet, error) {
	podSets, err := EffectivePodSets(ctx, r.client, job.Object().GetNamespace(), job.PodSets(), r.kind.PodIndexLabel)
	if err != nil {
		return nil, err
	}
	for i := range podSets {
		setSubGroups(podSets[i], job, r.kind.SubGroupIndexLabel)
	}
	return podSets, nil
}

// EffectivePodSets fills in pod sets of a namespace as their pods will be
// admitted (podSetsOf) and adds the topology request of their templates'
// annotations; indexLabel is the pods' index label, if they have one.
func EffectivePodSets(ctx context.Context, c client.Reader, namespace string, podSets []musterv1beta1.PodSet, indexLabel string) ([]musterv1beta1.PodSet, error) {
	var ranges corev1.LimitRangeList
	if err := c.List(ctx, &ranges, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	for i := range podSets {
		spec := &podSets[i].Template.Spec
		overhead, err := overheadOf(ctx, c, spec.RuntimeClassName)
		if err != nil {
			return nil, err
		}
		podSets[i].Template.Spec = *podrequests.Effective(spec, ranges.Items, overhead)
		podSets[i].TopologyRequest = TopologyRequestOf(&podSets[i].Template, indexLabel)
	}
	return podSets, nil
}

// overheadOf is the pod overhead of a RuntimeClass. A class that does not
// exist adds none: the API server will refuse the job's pods anyway.
func overheadOf(ctx context.Context, c client.Reader, runtimeClass *string) (corev1.ResourceList, error) {
	if runtimeClass == nil {
		return nil, nil
	}
	var rc nodev1.RuntimeClass
	if err := c.Get(ctx, client.ObjectKey{Name: *runtimeClass}, &rc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if rc.Overhead == nil {
		return nil, nil
	}
	return rc.Overhead.PodFixed, nil
}

// sameAskedRequests reports whether the pod sets a job asks for now are the
// ones its admitted Workload recorded: the same names and counts, and every
// request the job spells out (directly or as a limit) recorded with the same
// value. Values the Workload filled in from a LimitRange or RuntimeClass are
// not compared, so editing those while a job runs does not evict it; they
// apply to the job's next admission.
func sameAskedRequests(recorded, asked []musterv1beta1.PodSet, adm *musterv1beta1.Admission) bool {
	if len(recorded) != len(asked) {
		return false
	}
	for i := range recorded {
		if recorded[i].Name != asked[i].Name || !sameCount(&recorded[i], asked[i].Count, adm) {
			return false
		}
		own := podrequests.Effective(&asked[i].Template.Spec, nil, nil)
		if !containersRecorded(recorded[i].Template.Spec.InitContainers, own.InitContainers) ||
			!containersRecorded(recorded[i].Template.Spec.Containers, own.Containers) {
			return false
		}
	}
	return true
}

func containersRecorded(recorded, asked []corev1.Container) bool {
	if len(recorded) != len(asked) {
		return false
	}
	for i := range asked {
		for name, q := range asked[i].Resources.Requests {
			if have, ok := recorded[i].Resources.Requests[name]; !ok || have.Cmp(q) != 0 {
				return false
			}
		}
	}
	return true
}

// sameCount reports whether a job's pod count is the one recorded, or the
// fewer it was admitted and started with (partial admission).
func sameCount(recorded *musterv1beta1.PodSet, asked int32, adm *musterv1beta1.Admission) bool {
	if asked == recorded.Count {
		return true
	}
	if adm == nil {
		return false
	}
	for _, psa := range adm.PodSetAssignments {
		if psa.Name == recorded.Name && psa.Count != nil {
			return *psa.Count == asked
		}
	}
	return false
}

// setSubGroups records in a pod set's topology request how its pods are
// numbered within sub-groups, for kinds that have them.
func setSubGroups(ps musterv1beta1.PodSet, job GenericJob, label string) {
	sg, ok := job.(JobWithSubGroups)
	if tr := ps.TopologyRequest; tr != nil && ok && label != "" {
		if n := sg.SubGroups(ps.Name); n > 1 {
			tr.SubGroupIndexLabel, tr.SubGroupCount = ptr.To(label), ptr.To(n)
		}
	}
}
