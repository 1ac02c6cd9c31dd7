package pod

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

func gatedPod(gates ...string) *Pod {
	p := &Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	for _, g := range gates {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: g})
	}
	return p
}

// Suspending gates the Pod once; admission takes only Muster's gate away,
// so another controller's gate still holds the Pod.
func TestTheAdmissionGateIsTheSuspension(t *testing.T) {
	g := NewWithT(t)
	p := gatedPod("example.com/other")
	g.Expect(p.IsSuspended()).To(BeFalse())
	p.Suspend()
	p.Suspend()
	g.Expect(p.Spec.SchedulingGates).To(HaveLen(2))
	g.Expect(p.IsSuspended()).To(BeTrue())

	info := jobframework.PodSetInfo{Name: podSetName, Count: 1,
		NodeSelector: map[string]string{"pool": "h100"},
		Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}
	g.Expect(p.RunWithPodSetsInfo([]jobframework.PodSetInfo{info})).To(Succeed())
	g.Expect(p.IsSuspended()).To(BeFalse())
	g.Expect(p.Spec.SchedulingGates).To(ConsistOf(corev1.PodSchedulingGate{Name: "example.com/other"}))
	g.Expect(p.Spec.NodeSelector).To(Equal(map[string]string{"pool": "h100"}))
	g.Expect(p.Spec.Tolerations).To(HaveLen(1))
}

// A topology placement of a single Pod names its node: the Pod gets the
// node's hostname selector and the workload marks, never the topology
// gate (a Pod that exists takes no new gate).
func TestATopologyPlacementNamesTheNode(t *testing.T) {
	g := NewWithT(t)
	p := gatedPod(musterv1beta1.AdmissionSchedulingGate)
	info := jobframework.PodSetInfo{Name: podSetName, Count: 1,
		NodeSelector: map[string]string{corev1.LabelHostname: "node-1"},
		Topology:     &jobframework.TopologyInfo{Workload: "pod-p-abcde"}}
	g.Expect(p.RunWithPodSetsInfo([]jobframework.PodSetInfo{info})).To(Succeed())
	g.Expect(p.Spec.SchedulingGates).To(BeNil())
	g.Expect(p.Spec.NodeSelector).To(HaveKeyWithValue(corev1.LabelHostname, "node-1"))
	g.Expect(p.Annotations).To(HaveKeyWithValue(musterv1beta1.WorkloadAnnotation, "pod-p-abcde"))
}

// A user's node selector that contradicts the flavor's is a conflict, and
// the Pod is left as it was.
func TestAConflictingSelectorLeavesThePodGated(t *testing.T) {
	g := NewWithT(t)
	p := gatedPod(musterv1beta1.AdmissionSchedulingGate)
	p.Spec.NodeSelector = map[string]string{"pool": "a100"}
	err := p.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: podSetName, Count: 1, NodeSelector: map[string]string{"pool": "h100"}}})
	g.Expect(jobframework.IsPlacementConflict(err)).To(BeTrue())
	g.Expect(p.IsSuspended()).To(BeTrue())
	g.Expect(p.Spec.NodeSelector).To(Equal(map[string]string{"pool": "a100"}))
}

func TestFinishedAndReady(t *testing.T) {
	for name, tc := range map[string]struct {
		status                     corev1.PodStatus
		finished, succeeded, ready bool
	}{
		"pending":   {corev1.PodStatus{Phase: corev1.PodPending}, false, false, false},
		"running":   {corev1.PodStatus{Phase: corev1.PodRunning}, false, false, false},
		"ready":     {corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}, false, false, true},
		"succeeded": {corev1.PodStatus{Phase: corev1.PodSucceeded}, true, true, true},
		"failed":    {corev1.PodStatus{Phase: corev1.PodFailed, Message: "OOMKilled"}, true, false, true},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p := gatedPod()
			p.Status = tc.status
			_, succeeded, finished := p.Finished()
			g.Expect(finished).To(Equal(tc.finished))
			g.Expect(succeeded).To(Equal(tc.succeeded))
			g.Expect(p.PodsReady()).To(Equal(tc.ready))
			g.Expect(p.IsActive()).To(Equal(!tc.finished))
		})
	}
}

// The pod set is the Pod as it will run, without the node a scheduler
// gave it, and editing it does not edit the Pod.
func TestThePodSetIsThePod(t *testing.T) {
	g := NewWithT(t)
	p := gatedPod()
	p.Labels = map[string]string{"app": "nb"}
	p.Spec.NodeName = "node-1"
	ps := p.PodSets()
	g.Expect(ps).To(HaveLen(1))
	g.Expect(ps[0].Name).To(Equal("main"))
	g.Expect(ps[0].Count).To(BeEquivalentTo(1))
	g.Expect(ps[0].Template.Spec.NodeName).To(BeEmpty())
	ps[0].Template.Labels["app"] = "changed"
	g.Expect(p.Labels).To(HaveKeyWithValue("app", "nb"))
}

// A Pod placed in a topology cannot take the topology gate once created:
// it keeps the admission gate, with its placement's marks, for the
// ungater to lift, and counts as admitted meanwhile.
func TestAPodBoundForATopologyNodeKeepsItsGate(t *testing.T) {
	g := NewWithT(t)
	p := gatedPod()
	p.Suspend()
	info := jobframework.PodSetInfo{Name: podSetName, Count: 1, Topology: &jobframework.TopologyInfo{Workload: "wl", Gate: true}}
	g.Expect(p.RunWithPodSetsInfo([]jobframework.PodSetInfo{info})).To(Succeed())
	g.Expect(p.Spec.SchedulingGates).To(ConsistOf(corev1.PodSchedulingGate{Name: musterv1beta1.AdmissionSchedulingGate}))
	g.Expect(p.Annotations).To(HaveKeyWithValue(musterv1beta1.WorkloadAnnotation, "wl"))
	g.Expect(p.IsSuspended()).To(BeFalse(), "admitted, waiting only for its node")
	g.Expect(info.Topology.Gate).To(BeTrue(), "the shared placement is not changed")

	copied := (*Pod)((*corev1.Pod)(p).DeepCopy())
	copied.Suspend()
	g.Expect(copied.IsSuspended()).To(BeTrue(), "a new Pod copied from a placed one is placed nowhere")
	g.Expect(copied.Spec.SchedulingGates).To(HaveLen(1))
}
