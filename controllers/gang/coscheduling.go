package gang

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// CoschedulingPodGroup is scheduler-plugins' PodGroup. Its Go types are
// not imported: their module pins k8s.io/kubernetes v1.31, which cannot
// share a build with this one's v0.37 staging modules.
var CoschedulingPodGroup = schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}

// CoschedulingPodGroupLabel puts a pod in its coscheduling PodGroup.
const CoschedulingPodGroupLabel = "scheduling.x-k8s.io/pod-group"

// coscheduling is the Coscheduling plugin of scheduler-plugins, run as a
// second scheduler: one PodGroup per workload, minMember all its admitted
// pods, minResources what the admission holds; Permit holds the pods until
// minMember of them are assumed.
type coscheduling struct{}

func (coscheduling) objects(g *Group) []client.Object {
	total := corev1.ResourceList{}
	for _, ps := range g.PodSets {
		addResources(total, ps.Requests)
	}
	res := map[string]any{}
	for name, q := range total {
		res[string(name)] = q.String()
	}
	pg := newCoschedulingPodGroup(GroupName(g.Workload, ""), g.Workload.Namespace)
	pg.Object["spec"] = map[string]any{"minMember": int64(g.Pods()), "minResources": res}
	return []client.Object{pg}
}

func (coscheduling) marks(g *Group, _ string) *jobframework.GangInfo {
	return &jobframework.GangInfo{
		Labels: map[string]string{
			musterv1beta1.GangProviderLabel: string(musterv1beta1.GangCoscheduling),
			CoschedulingPodGroupLabel:       GroupName(g.Workload, ""),
		},
		Annotations: map[string]string{musterv1beta1.SchedulerNameAnnotation: g.SchedulerName},
	}
}

func (coscheduling) names(wl *musterv1beta1.Workload) []client.Object {
	return []client.Object{newCoschedulingPodGroup(GroupName(wl, ""), "")}
}

func newCoschedulingPodGroup(name, namespace string) *unstructured.Unstructured {
	pg := &unstructured.Unstructured{}
	pg.SetGroupVersionKind(CoschedulingPodGroup)
	pg.SetName(name)
	pg.SetNamespace(namespace)
	return pg
}
