package gang

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// VolcanoQueueLabel on a job names its Volcano queue (KubeRay's spelling).
const VolcanoQueueLabel = "volcano.sh/queue-name"

// volcanoTaskAnnotation names a pod's task within its Volcano PodGroup.
const volcanoTaskAnnotation = "volcano.sh/task-spec"

// volcano is Volcano's scheduler: one scheduling.volcano.sh PodGroup per
// workload, minMember all its admitted pods (minTaskMember per pod set),
// in the gang's queue, minResources what the admission holds, so Volcano
// starts the group only when all of it fits.
type volcano struct{}

func (volcano) objects(g *Group) []client.Object {
	pg := &volcanov1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: GroupName(g.Workload, ""), Namespace: g.Workload.Namespace},
		Spec: volcanov1beta1.PodGroupSpec{
			MinMember:     g.Pods(),
			MinTaskMember: map[string]int32{},
			Queue:         g.Queue,
		},
	}
	total := corev1.ResourceList{}
	for _, ps := range g.PodSets {
		pg.Spec.MinTaskMember[ps.Name] = ps.Count
		addResources(total, ps.Requests)
	}
	pg.Spec.MinResources = &total
	return []client.Object{pg}
}

func (volcano) marks(g *Group, podSet string) *jobframework.GangInfo {
	return &jobframework.GangInfo{
		Labels: map[string]string{musterv1beta1.GangProviderLabel: string(musterv1beta1.GangVolcano)},
		Annotations: map[string]string{
			volcanov1beta1.KubeGroupNameAnnotationKey: GroupName(g.Workload, ""),
			volcanoTaskAnnotation:                     podSet,
			musterv1beta1.SchedulerNameAnnotation:     g.SchedulerName,
		},
	}
}

func (volcano) names(wl *musterv1beta1.Workload) []client.Object {
	return []client.Object{&volcanov1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: GroupName(wl, "")}}}
}

func addResources(total, add corev1.ResourceList) {
	for name, q := range add {
		sum := total[name]
		sum.Add(q)
		total[name] = sum
	}
}

// AddToScheme adds the typed pod groups Muster creates that client-go's
// scheme lacks (Volcano's) to a scheme.
var AddToScheme = volcanov1beta1.AddToScheme
