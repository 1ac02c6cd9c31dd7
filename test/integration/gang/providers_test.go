package gang

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/gang"
	"github.com/musterhq/muster/test/framework"
)

func ownedBy(g Gomega, obj client.Object, wl *musterv1beta1.Workload) {
	g.Expect(obj.GetOwnerReferences()).To(ContainElement(HaveField("UID", wl.UID)), "%s not owned by its workload", obj.GetName())
}

func TestKubeSchedulerWorkloadAndPodGroups(t *testing.T) {
	q := newGangQueue(t, musterv1beta1.GangKubeScheduler, "", "8")
	job, wl := startedJob(t, q, "train", 4)
	g := NewWithT(t)
	group := gang.GroupName(wl, "")
	tpl := job.Spec.Template
	g.Expect(tpl.Labels).To(HaveKeyWithValue(musterv1beta1.GangProviderLabel, "KubeScheduler"))
	g.Expect(tpl.Annotations).To(HaveKeyWithValue(musterv1beta1.SchedulingGroupAnnotation, group))

	sw := &schedulingv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: wl.Name, Namespace: q.ns}}
	get(t, sw)
	g.Expect(sw.Spec.ControllerRef).To(Equal(&schedulingv1beta1.TypedLocalObjectReference{APIGroup: "batch", Kind: "Job", Name: "train"}))
	g.Expect(sw.Spec.PodGroupTemplates).To(HaveLen(1))
	g.Expect(sw.Spec.PodGroupTemplates[0].Name).To(Equal("job"))
	g.Expect(sw.Spec.PodGroupTemplates[0].SchedulingPolicy.Gang).To(Equal(&schedulingv1beta1.GangSchedulingPolicy{MinCount: 4}))
	ownedBy(g, sw, wl)

	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: group, Namespace: q.ns}}
	get(t, pg)
	g.Expect(pg.Spec.WorkloadRef).To(Equal(&schedulingv1beta1.WorkloadReference{WorkloadName: wl.Name, TemplateName: "job"}))
	g.Expect(pg.Spec.SchedulingPolicy.Gang).To(Equal(&schedulingv1beta1.GangSchedulingPolicy{MinCount: 4}))
	g.Expect(pg.Spec.SchedulingConstraints).To(BeNil())
	ownedBy(g, pg, wl)

	pod := podOf(t, job, "train-0")
	g.Expect(pod.Spec.SchedulingGroup).NotTo(BeNil())
	g.Expect(*pod.Spec.SchedulingGroup.PodGroupName).To(Equal(group))
	g.Expect(pod.Spec.SchedulerName).To(Equal(corev1.DefaultSchedulerName), "KubeScheduler keeps the pods' scheduler")

	env.CompleteJob(t, job)
	gone(t, pg)
	gone(t, sw)

	job, wl = startedJob(t, q, "evicted", 2)
	sw = &schedulingv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: wl.Name, Namespace: q.ns}}
	pg = &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: gang.GroupName(wl, ""), Namespace: q.ns}}
	get(t, pg)
	g.Expect(pg.Spec.SchedulingPolicy.Gang.MinCount).To(Equal(int32(2)))
	evictedAndRestored(t, job, wl, pg, sw)
}

func TestKubeSchedulerTopologyConstraintIsAccepted(t *testing.T) {
	ns := env.NewNamespace(t, "gang", nil)
	wl := &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns, UID: "u"}}
	objs := gang.PodGroups(musterv1beta1.GangKubeScheduler, &gang.Group{
		Workload: wl, JobName: "train", JobGVK: framework.JobGVK,
		PodSets: []gang.PodSet{{Name: "main", Count: 8, TopologyKey: "topology.kubernetes.io/rack"}},
	})
	g := NewWithT(t)
	for _, obj := range objs {
		g.Expect(env.Client.Create(context.Background(), obj)).To(Succeed(), "the API server refused %s", obj.GetName())
	}
	pg := objs[1].(*schedulingv1beta1.PodGroup)
	get(t, pg)
	g.Expect(pg.Spec.SchedulingConstraints.Topology).To(Equal([]schedulingv1beta1.TopologyConstraint{{Key: "topology.kubernetes.io/rack"}}))
}

func TestVolcanoPodGroup(t *testing.T) {
	q := newGangQueue(t, musterv1beta1.GangVolcano, "research", "8")
	job, wl := startedJob(t, q, "train", 4)
	g := NewWithT(t)
	group := gang.GroupName(wl, "")
	tpl := job.Spec.Template
	g.Expect(tpl.Labels).To(HaveKeyWithValue(musterv1beta1.GangProviderLabel, "Volcano"))
	g.Expect(tpl.Annotations).To(And(
		HaveKeyWithValue("scheduling.k8s.io/group-name", group),
		HaveKeyWithValue("volcano.sh/task-spec", "main"),
		HaveKeyWithValue(musterv1beta1.SchedulerNameAnnotation, "volcano")))

	pg := &volcanov1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: group, Namespace: q.ns}}
	get(t, pg)
	g.Expect(pg.Spec.MinMember).To(Equal(int32(4)))
	g.Expect(pg.Spec.MinTaskMember).To(Equal(map[string]int32{"main": 4}))
	g.Expect(pg.Spec.Queue).To(Equal("research"))
	g.Expect(pg.Spec.MinResources).NotTo(BeNil())
	g.Expect((*pg.Spec.MinResources)[gpu]).To(Equal(resource.MustParse("4")))
	ownedBy(g, pg, wl)

	pod := podOf(t, job, "train-0")
	g.Expect(pod.Spec.SchedulerName).To(Equal("volcano"))
	g.Expect(pod.Spec.SchedulingGroup).To(BeNil())

	// Evicted: the group goes, the template is as the user wrote it.
	evictedAndRestored(t, job, wl, pg)

	job, wl = startedJob(t, q, "finished", 2)
	pg = &volcanov1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: gang.GroupName(wl, ""), Namespace: q.ns}}
	get(t, pg)
	g.Expect(pg.Spec.MinMember).To(Equal(int32(2)))
	env.CompleteJob(t, job)
	gone(t, pg)
}

func TestCoschedulingPodGroup(t *testing.T) {
	q := newGangQueue(t, musterv1beta1.GangCoscheduling, "", "8")
	job, wl := startedJob(t, q, "train", 3)
	g := NewWithT(t)
	group := gang.GroupName(wl, "")
	tpl := job.Spec.Template
	g.Expect(tpl.Labels).To(And(HaveKeyWithValue(musterv1beta1.GangProviderLabel, "Coscheduling"), HaveKeyWithValue(gang.CoschedulingPodGroupLabel, group)))

	pg := &unstructured.Unstructured{}
	pg.SetGroupVersionKind(gang.CoschedulingPodGroup)
	pg.SetName(group)
	pg.SetNamespace(q.ns)
	get(t, pg)
	minMember, _, _ := unstructured.NestedInt64(pg.Object, "spec", "minMember")
	g.Expect(minMember).To(Equal(int64(3)))
	gpus, _, _ := unstructured.NestedString(pg.Object, "spec", "minResources", string(gpu))
	g.Expect(gpus).To(Equal("3"))
	ownedBy(g, pg, wl)

	pod := podOf(t, job, "train-0")
	g.Expect(pod.Spec.SchedulerName).To(Equal("scheduler-plugins-scheduler"))
	g.Expect(pod.Labels).To(HaveKeyWithValue(gang.CoschedulingPodGroupLabel, group))

	env.CompleteJob(t, job)
	gone(t, pg)

	job, wl = startedJob(t, q, "evicted", 2)
	pg.SetName(gang.GroupName(wl, ""))
	get(t, pg)
	evictedAndRestored(t, job, wl, pg)
}

func TestPodsOfNoGangAreLeftAlone(t *testing.T) {
	ns := env.NewNamespace(t, "gang", nil)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns, Annotations: map[string]string{musterv1beta1.SchedulerNameAnnotation: "volcano"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	g := NewWithT(t)
	g.Expect(env.Client.Create(context.Background(), pod)).To(Succeed())
	g.Expect(pod.Spec.SchedulerName).To(Equal(corev1.DefaultSchedulerName), "a pod without the gang label is not touched")
}
