package gang

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

func testGroup(podSets ...PodSet) *Group {
	return &Group{
		Workload: &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "job-train-abc12", Namespace: "ns"}},
		JobGVK:   schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, JobName: "train",
		Queue: "research", SchedulerName: "volcano", PodSets: podSets,
	}
}

func gpus(n string) corev1.ResourceList {
	return corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(n)}
}

func TestGroupNameIsALabelValue(t *testing.T) {
	g := NewWithT(t)
	short := &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "job-a-1"}}
	g.Expect(GroupName(short, "main")).To(Equal("job-a-1-main"))
	long := &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "job-" + strings.Repeat("x", 70) + "-abcde"}}
	a, b := GroupName(long, "main"), GroupName(long, "worker")
	g.Expect(len(a)).To(BeNumerically("<=", 63))
	g.Expect(validation.IsValidLabelValue(a)).To(BeEmpty())
	g.Expect(a).NotTo(Equal(b), "cut names stay distinct")
}

func TestKubeSchedulerObjects(t *testing.T) {
	g := NewWithT(t)
	objs := PodGroups(musterv1beta1.GangKubeScheduler, testGroup(
		PodSet{Name: "master", Count: 1, TopologyKey: "topology.kubernetes.io/rack"},
		PodSet{Name: "worker", Count: 15, TopologyKey: "topology.kubernetes.io/rack"}))
	g.Expect(objs).To(HaveLen(2))
	wl := objs[0].(*schedulingv1beta1.Workload)
	g.Expect(wl.Name).To(Equal("job-train-abc12"))
	g.Expect(wl.Spec.ControllerRef.Kind).To(Equal("Job"))
	g.Expect(wl.Spec.PodGroupTemplates).To(HaveLen(1))
	g.Expect(wl.Spec.PodGroupTemplates[0].SchedulingPolicy.Gang.MinCount).To(Equal(int32(16)), "one gang: all the job's pods")
	pg := objs[1].(*schedulingv1beta1.PodGroup)
	g.Expect(pg.Name).To(Equal("job-train-abc12"))
	g.Expect(pg.Spec.WorkloadRef.TemplateName).To(Equal(wl.Spec.PodGroupTemplates[0].Name))
	g.Expect(pg.Spec.SchedulingConstraints.Topology[0].Key).To(Equal("topology.kubernetes.io/rack"))
	m := kubeScheduler{}.marks(testGroup(), "worker")
	g.Expect(m.Annotations).To(Equal(map[string]string{musterv1beta1.SchedulingGroupAnnotation: "job-train-abc12"}))
}

func TestKubeSchedulerTopologyOnlyWhenAllPodSetsShareALevel(t *testing.T) {
	g := NewWithT(t)
	for name, podSets := range map[string][]PodSet{
		"one without":       {{Name: "a", TopologyKey: "rack"}, {Name: "b"}},
		"different levels":  {{Name: "a", TopologyKey: "rack"}, {Name: "b", TopologyKey: "block"}},
		"none asks for one": {{Name: "a"}},
	} {
		g.Expect(topologyConstraint(testGroup(podSets...))).To(BeNil(), name)
	}
}

func TestWithoutTopologyOnlyForRefusedConstraints(t *testing.T) {
	g := NewWithT(t)
	objs := PodGroups(musterv1beta1.GangKubeScheduler, testGroup(PodSet{Name: "main", Count: 4, TopologyKey: "rack"}))
	refused := apierrors.NewInvalid(schema.GroupKind{Group: "scheduling.k8s.io", Kind: "PodGroup"}, "x",
		field.ErrorList{field.Forbidden(field.NewPath("spec", "schedulingConstraints"), "disabled by feature-gate")})
	fallback, ok := withoutTopology(objs[1], refused)
	g.Expect(objs[1]).To(BeAssignableToTypeOf(&schedulingv1beta1.PodGroup{}))
	g.Expect(ok).To(BeTrue())
	g.Expect(fallback.(*schedulingv1beta1.PodGroup).Spec.SchedulingConstraints).To(BeNil())
	_, ok = withoutTopology(objs[1], apierrors.NewInvalid(schema.GroupKind{}, "x", field.ErrorList{field.Required(field.NewPath("spec", "schedulingPolicy"), "")}))
	g.Expect(ok).To(BeFalse(), "another invalid field is not retried")
}

func TestVolcanoPodGroupCountsAndResources(t *testing.T) {
	g := NewWithT(t)
	objs := PodGroups(musterv1beta1.GangVolcano, testGroup(
		PodSet{Name: "master", Count: 1, Requests: gpus("1")},
		PodSet{Name: "worker", Count: 7, Requests: gpus("7")}))
	pg := objs[0].(*volcanov1beta1.PodGroup)
	g.Expect(pg.Spec.MinMember).To(Equal(int32(8)))
	g.Expect(pg.Spec.MinTaskMember).To(Equal(map[string]int32{"master": 1, "worker": 7}))
	g.Expect(pg.Spec.Queue).To(Equal("research"))
	gpuTotal := (*pg.Spec.MinResources)["nvidia.com/gpu"]
	g.Expect(gpuTotal.Value()).To(Equal(int64(8)))
}

func TestKAICreatesNothing(t *testing.T) {
	g := NewWithT(t)
	g.Expect(PodGroups(musterv1beta1.GangKAI, testGroup(PodSet{Name: "main", Count: 4}))).To(BeEmpty())
	grp := testGroup()
	grp.SchedulerName = "kai-scheduler"
	m := kai{}.marks(grp, "main")
	g.Expect(m.Labels).To(HaveKeyWithValue(KAIQueueLabel, "research"))
	g.Expect(m.Annotations).To(HaveKeyWithValue(musterv1beta1.SchedulerNameAnnotation, "kai-scheduler"))
	g.Expect(PodGroups(musterv1beta1.GangNone, grp)).To(BeEmpty())
}

func TestPodWebhook(t *testing.T) {
	marked := func(scheduler string, group *string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Labels:      map[string]string{musterv1beta1.GangProviderLabel: "Volcano"},
				Annotations: map[string]string{musterv1beta1.SchedulerNameAnnotation: "volcano", musterv1beta1.SchedulingGroupAnnotation: "pg"},
			},
			Spec: corev1.PodSpec{SchedulerName: scheduler, SchedulingGroup: schedulingGroup(group)},
		}
	}
	own := "mine"
	cases := map[string]struct {
		pod           *corev1.Pod
		wantScheduler string
		wantGroup     string
	}{
		"defaulted scheduler is replaced": {pod: marked(corev1.DefaultSchedulerName, nil), wantScheduler: "volcano", wantGroup: "pg"},
		"empty scheduler is set":          {pod: marked("", nil), wantScheduler: "volcano", wantGroup: "pg"},
		"a scheduler of its own stays":    {pod: marked("custom", nil), wantScheduler: "custom", wantGroup: "pg"},
		"a group of its own stays":        {pod: marked("", &own), wantScheduler: "volcano", wantGroup: "mine"},
		"no gang label, nothing changes": {pod: func() *corev1.Pod {
			p := marked(corev1.DefaultSchedulerName, nil)
			p.Labels = nil
			return p
		}(), wantScheduler: corev1.DefaultSchedulerName},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(PodWebhook{}.Default(t.Context(), tc.pod)).To(Succeed())
			g.Expect(tc.pod.Spec.SchedulerName).To(Equal(tc.wantScheduler))
			got := ""
			if sg := tc.pod.Spec.SchedulingGroup; sg != nil {
				got = *sg.PodGroupName
			}
			g.Expect(got).To(Equal(tc.wantGroup))
		})
	}
}

func schedulingGroup(name *string) *corev1.PodSchedulingGroup {
	if name == nil {
		return nil
	}
	return &corev1.PodSchedulingGroup{PodGroupName: name}
}
