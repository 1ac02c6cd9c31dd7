//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

// TestPlainPodsWaitAtTheAdmissionGate: two plain Pods of 8 GPUs in a queue
// of 8 h100 GPUs, the second in Kueue's spelling (its queue label): the
// first runs on an h100 node, the second waits at Muster's admission gate
// (kube-scheduler never sees it) and runs once the first has finished;
// a Pod that names no queue runs beside them, untouched.
func TestPlainPodsWaitAtTheAdmissionGate(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	queues(t, ns, "0", "8")
	first := MakePod("first", ns).Queue("main").Request(gpu, "8").Request("cpu", "1").Annotation("muster.dev/runtime", "10s").Obj()
	second := MakePod("second", ns).Label(musterv1beta1.KueueQueueNameLabel, "main").Request(gpu, "8").Request("cpu", "1").Obj()
	plain := MakePod("plain", ns).Request("cpu", "1").Obj()
	createAll(t, first)
	g.Eventually(func(g Gomega) string {
		p := getPod(g, first)
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
		return nodeLabel(g, p.Spec.NodeName, "muster.dev/gpu")
	}, timeout, time.Second).Should(Equal("h100"), "the first runs on its flavor's nodes")
	createAll(t, second, plain)
	g.Consistently(func(g Gomega) {
		p := getPod(g, second)
		g.Expect(p.Spec.SchedulingGates).To(ContainElement(corev1.PodSchedulingGate{Name: musterv1beta1.AdmissionSchedulingGate}))
		g.Expect(p.Spec.NodeName).To(BeEmpty())
	}, 3*time.Second, time.Second).Should(Succeed(), "the second waits: its 8 GPUs are the first's")
	g.Eventually(func(g Gomega) corev1.PodPhase {
		return getPod(g, plain).Status.Phase
	}, timeout, time.Second).Should(Equal(corev1.PodRunning), "a Pod in no queue runs as written")
	g.Expect(getPod(g, plain).Spec.SchedulingGates).To(BeEmpty())

	g.Eventually(func(g Gomega) corev1.PodPhase {
		return getPod(g, first).Status.Phase
	}, timeout, time.Second).Should(Equal(corev1.PodSucceeded))
	g.Eventually(func(g Gomega) {
		p := getPod(g, second)
		g.Expect(slices.ContainsFunc(p.Spec.SchedulingGates, func(s corev1.PodSchedulingGate) bool {
			return s.Name == musterv1beta1.AdmissionSchedulingGate
		})).To(BeFalse())
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
		g.Expect(nodeLabel(g, p.Spec.NodeName, "muster.dev/gpu")).To(Equal("h100"))
	}, timeout, time.Second).Should(Succeed(), "the second runs on the quota the first released")
}

func getPod(g Gomega, p *corev1.Pod) *corev1.Pod {
	var got corev1.Pod
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(p), &got)).To(Succeed())
	return &got
}
