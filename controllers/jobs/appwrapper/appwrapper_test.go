package appwrapper

import (
	"testing"

	. "github.com/onsi/gomega"
	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/test/builder"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// A wrapped Job's pods are inferred (its parallelism), a declared pod set
// is taken as declared; each is a pod set named as Kueue names it.
func TestPodSetsAreTheComponentsPods(t *testing.T) {
	g := NewWithT(t)
	workers := builder.MakeJob("workers", "ns").Parallelism(4).Request(gpu, "1").Obj()
	driver := builder.MakeJob("driver", "ns").Request("cpu", "1").Obj()
	aw := builder.MakeAppWrapper("aw", "ns").Component(workers).
		Component(driver, awv1beta2.AppWrapperPodSet{Path: "template.spec.template", Replicas: ptr.To[int32](1)}).Obj()
	j := (*Job)(aw)
	ps := j.PodSets()
	g.Expect(ps).To(HaveLen(2))
	g.Expect([]string{ps[0].Name, ps[1].Name}).To(Equal([]string{"aw-0", "aw-1"}))
	g.Expect([]int32{ps[0].Count, ps[1].Count}).To(Equal([]int32{4, 1}))
	g.Expect(j.ValidateQueued()).To(BeEmpty())
	g.Expect(aw.Status.ComponentStatus).To(BeEmpty(), "the library's inference stays off the object")
}

// Admission hands each pod set's placement to its component's
// podSetInfos and resumes; stopping drops them.
func TestPlacementGoesIntoPodSetInfos(t *testing.T) {
	g := NewWithT(t)
	aw := builder.MakeAppWrapper("aw", "ns").Component(builder.MakeJob("a", "ns").Obj()).Component(builder.MakeJob("b", "ns").Obj()).Obj()
	aw.Spec.Suspend = true
	j := (*Job)(aw)
	g.Expect(j.RunWithPodSetsInfo([]jobframework.PodSetInfo{
		{Name: "aw-0", Count: 1, NodeSelector: map[string]string{"pool": "cpu"}},
		{Name: "aw-1", Count: 1, NodeSelector: map[string]string{"pool": "gpu"}, Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}},
	})).To(Succeed())
	g.Expect(j.IsSuspended()).To(BeFalse())
	g.Expect(aw.Spec.Components[0].PodSetInfos).To(ConsistOf(HaveField("NodeSelector", HaveKeyWithValue("pool", "cpu"))))
	g.Expect(aw.Spec.Components[1].PodSetInfos[0].Tolerations).To(HaveLen(1))
	g.Expect(aw.Status.ComponentStatus).To(BeEmpty())
	j.Suspend()
	g.Expect(j.RestorePodSetsInfo(nil)).To(BeTrue())
	g.Expect(aw.Spec.Components[0].PodSetInfos).To(BeNil())
	g.Expect(j.RestorePodSetsInfo(nil)).To(BeFalse())
	g.Expect(j.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "nope", Count: 1}})).NotTo(Succeed())
}

// Components Muster cannot read pods from are refused, saying why.
func TestUnreadableComponentsAreRefused(t *testing.T) {
	g := NewWithT(t)
	g.Expect((*Job)(builder.MakeAppWrapper("aw", "ns").Obj()).ValidateQueued()).To(ConsistOf(HaveField("Type", BeEquivalentTo("FieldValueRequired"))))
	bad := builder.MakeAppWrapper("aw", "ns").Component(builder.MakeJob("a", "ns").Obj(), awv1beta2.AppWrapperPodSet{Path: "template.spec.nothing"}).Obj()
	g.Expect((*Job)(bad).ValidateQueued()).To(ConsistOf(HaveField("Detail", ContainSubstring("leads to no pod template"))))
}

// Finished on the controller's phase, a failed AppWrapper once its
// resources are gone.
func TestFinished(t *testing.T) {
	g := NewWithT(t)
	aw := builder.MakeAppWrapper("aw", "ns").Obj()
	j := (*Job)(aw)
	_, _, done := j.Finished()
	g.Expect(done).To(BeFalse())
	aw.Status.Phase = awv1beta2.AppWrapperFailed
	meta.SetStatusCondition(&aw.Status.Conditions, metav1.Condition{Type: string(awv1beta2.ResourcesDeployed), Status: metav1.ConditionTrue, Reason: "x"})
	_, _, done = j.Finished()
	g.Expect(done).To(BeFalse(), "still deleting its resources")
	g.Expect(j.IsActive()).To(BeTrue())
	meta.SetStatusCondition(&aw.Status.Conditions, metav1.Condition{Type: string(awv1beta2.ResourcesDeployed), Status: metav1.ConditionFalse, Reason: "x"})
	_, ok, done := j.Finished()
	g.Expect([]bool{ok, done}).To(Equal([]bool{false, true}))
	aw.Status.Phase = awv1beta2.AppWrapperSucceeded
	_, ok, done = j.Finished()
	g.Expect([]bool{ok, done}).To(Equal([]bool{true, true}))
}
