package gang

import (
	"strings"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// kubeScheduler is Kubernetes' own gang scheduling (GenericWorkload, beta
// and off by default in 1.37): a scheduling.k8s.io/v1beta1 Workload with a
// pod group template per pod set, and a PodGroup per pod set whose gang
// minCount is the admitted count. kube-scheduler holds a group's pods
// until minCount of them exist and binds them only together. A PodGroup
// gangs one pod set: a job of several is bound whole per pod set.
type kubeScheduler struct{}

func (kubeScheduler) objects(g *Group) []client.Object {
	wl := &schedulingv1beta1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: g.Workload.Name, Namespace: g.Workload.Namespace},
		Spec: schedulingv1beta1.WorkloadSpec{
			ControllerRef: &schedulingv1beta1.TypedLocalObjectReference{APIGroup: g.JobGVK.Group, Kind: g.JobGVK.Kind, Name: g.JobName},
		},
	}
	out := []client.Object{wl}
	for _, ps := range g.PodSets {
		policy := schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: ps.Count}}
		var constraints *schedulingv1beta1.PodGroupSchedulingConstraints
		if ps.TopologyKey != "" {
			constraints = &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: ps.TopologyKey}}}
		}
		wl.Spec.PodGroupTemplates = append(wl.Spec.PodGroupTemplates, schedulingv1beta1.PodGroupTemplate{
			Name: ps.Name, SchedulingPolicy: policy, SchedulingConstraints: constraints,
		})
		out = append(out, &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: GroupName(g.Workload, ps.Name), Namespace: g.Workload.Namespace},
			Spec: schedulingv1beta1.PodGroupSpec{
				WorkloadRef:           &schedulingv1beta1.WorkloadReference{WorkloadName: g.Workload.Name, TemplateName: ps.Name},
				SchedulingPolicy:      *policy.DeepCopy(),
				SchedulingConstraints: constraints.DeepCopy(),
			},
		})
	}
	return out
}

func (kubeScheduler) marks(g *Group, podSet string) *jobframework.GangInfo {
	return &jobframework.GangInfo{
		Labels:      map[string]string{musterv1beta1.GangProviderLabel: string(musterv1beta1.GangKubeScheduler)},
		Annotations: map[string]string{musterv1beta1.SchedulingGroupAnnotation: GroupName(g.Workload, podSet)},
	}
}

func (kubeScheduler) names(wl *musterv1beta1.Workload) []client.Object {
	out := []client.Object{&schedulingv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: wl.Name}}}
	for _, ps := range wl.Spec.PodSets {
		out = append(out, &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: GroupName(wl, ps.Name)}})
	}
	return out
}

// withoutTopology is obj without topology constraints when the API server
// refused them (TopologyAwareWorkloadScheduling off): Muster's own
// placement already keeps the pods in their domain.
func withoutTopology(obj client.Object, err error) (client.Object, bool) {
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "schedulingConstraints") {
		return nil, false
	}
	switch o := obj.(type) {
	case *schedulingv1beta1.Workload:
		c := o.DeepCopy()
		for i := range c.Spec.PodGroupTemplates {
			c.Spec.PodGroupTemplates[i].SchedulingConstraints = nil
		}
		c.ResourceVersion = ""
		return c, hasConstraints(o)
	case *schedulingv1beta1.PodGroup:
		c := o.DeepCopy()
		c.Spec.SchedulingConstraints = nil
		c.ResourceVersion = ""
		return c, o.Spec.SchedulingConstraints != nil
	}
	return nil, false
}

func hasConstraints(w *schedulingv1beta1.Workload) bool {
	for _, t := range w.Spec.PodGroupTemplates {
		if t.SchedulingConstraints != nil {
			return true
		}
	}
	return false
}
