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
// and off by default in 1.37): a scheduling.k8s.io/v1beta1 Workload with
// one pod group template and one PodGroup whose gang minCount is all the
// workload's admitted pods. kube-scheduler holds a group's pods until
// minCount of them exist and binds them only together. One group for the
// whole job, not one per pod set: a gang is the pods that name it, and
// with a group per pod set a PyTorchJob's Master was bound (and ran)
// without its Workers (test/e2e/gang_test.go).
type kubeScheduler struct{}

// kubeSchedulerTemplate names the Workload's one pod group template.
const kubeSchedulerTemplate = "job"

func (kubeScheduler) objects(g *Group) []client.Object {
	policy := schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: g.Pods()}}
	constraints := topologyConstraint(g)
	wl := &schedulingv1beta1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: g.Workload.Name, Namespace: g.Workload.Namespace},
		Spec: schedulingv1beta1.WorkloadSpec{
			ControllerRef: &schedulingv1beta1.TypedLocalObjectReference{APIGroup: g.JobGVK.Group, Kind: g.JobGVK.Kind, Name: g.JobName},
			PodGroupTemplates: []schedulingv1beta1.PodGroupTemplate{{
				Name: kubeSchedulerTemplate, SchedulingPolicy: policy, SchedulingConstraints: constraints,
			}},
		},
	}
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: GroupName(g.Workload, ""), Namespace: g.Workload.Namespace},
		Spec: schedulingv1beta1.PodGroupSpec{
			WorkloadRef:           &schedulingv1beta1.WorkloadReference{WorkloadName: g.Workload.Name, TemplateName: kubeSchedulerTemplate},
			SchedulingPolicy:      *policy.DeepCopy(),
			SchedulingConstraints: constraints.DeepCopy(),
		},
	}
	return []client.Object{wl, pg}
}

// topologyConstraint is the level all the workload's pods must share a
// domain of, when every pod set asks for the same required level; nil
// otherwise (Muster's own placement keeps each pod set in its domain).
func topologyConstraint(g *Group) *schedulingv1beta1.PodGroupSchedulingConstraints {
	key := ""
	for i, ps := range g.PodSets {
		if ps.TopologyKey == "" || i > 0 && ps.TopologyKey != key {
			return nil
		}
		key = ps.TopologyKey
	}
	if key == "" {
		return nil
	}
	return &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: key}}}
}

func (kubeScheduler) marks(g *Group, _ string) *jobframework.GangInfo {
	return &jobframework.GangInfo{
		Labels:      map[string]string{musterv1beta1.GangProviderLabel: string(musterv1beta1.GangKubeScheduler)},
		Annotations: map[string]string{musterv1beta1.SchedulingGroupAnnotation: GroupName(g.Workload, "")},
	}
}

func (kubeScheduler) names(wl *musterv1beta1.Workload) []client.Object {
	return []client.Object{
		&schedulingv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: wl.Name}},
		&schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: GroupName(wl, "")}},
	}
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
