package topology

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// Node fit on flavors without a Topology: what a user gets by default.

// plainPool creates n 8-GPU nodes labelled with the test's pool (no rack
// or block labels: most clusters have none), a flavor over them with the
// given node fit ("" for the default), and a queue of 40 GPUs.
func plainPool(t *testing.T, n int, fit musterv1beta1.NodeFitMode) *fabric {
	t.Helper()
	f := &fabric{ns: env.NewNamespace(t, "fit", nil)}
	f.flavor, f.lq = "f-"+f.ns, "lq"
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s-n%d", f.ns, i)
		createNode(t, MakeNode(name).Label(pool, f.ns).Allocatable(gpu, perNodeGB).Allocatable(corev1.ResourceCPU, "32").Obj())
		f.nodes = append(f.nodes, name)
	}
	cq := MakeClusterQueue("cq-" + f.ns).ResourceGroup(MakeFlavorQuotas(f.flavor).Resource(gpu, "40").Obj()).Obj()
	env.CreateAll(t, MakeResourceFlavor(f.flavor).NodeLabel(pool, f.ns).NodeFit(fit).Obj(),
		cq, MakeLocalQueue(f.lq, f.ns).ClusterQueue(cq.Name).Obj())
	return f
}

func TestNodeFitByDefaultWaitsForANodeThatHoldsThePod(t *testing.T) {
	// Kueue #4329 on the default flavor: 6 + 6 of 8 GPUs used, a 4-GPU
	// pod fits the quota but no node. It waits, naming the closest node,
	// and runs once a node frees; kube-scheduler binds it (no gate, no
	// node named in its template).
	f := plainPool(t, 2, "")
	bindPod(t, f.ns, "other-1", f.nodes[0], "6")
	bindPod(t, f.ns, "other-2", f.nodes[1], "6")
	j := MakeJob("four", f.ns).Queue(f.lq).Parallelism(1).Request(gpu, "4").Obj()
	env.CreateAll(t, j)
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(wl.Status.Admission).To(BeNil())
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(ContainSubstring("closest node " + f.nodes[0]))
		g.Expect(c.Message).To(ContainSubstring("has 2 nvidia.com/gpu free"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(env.WorkloadOfJob(g, j).Status.Admission).To(BeNil())
	}, "2s", framework.Interval).Should(Succeed())

	// A terminating pod still takes its node: only once it is gone does
	// the node free.
	g.Expect(env.Client.Delete(context.Background(), &corev1.Pod{ObjectMeta: objectMeta(f.ns, "other-2")})).To(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(env.WorkloadOfJob(g, j).Status.Admission).To(BeNil())
	}, "2s", framework.Interval).Should(Succeed())
	g.Expect(env.Client.Delete(context.Background(), &corev1.Pod{ObjectMeta: objectMeta(f.ns, "other-2")}, client.GracePeriodSeconds(0))).To(Succeed())
	g.Expect(placement(t, j)).To(Equal(map[string]int32{f.nodes[1]: 1}))
	g.Eventually(func(g Gomega) {
		var got batchv1.Job
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(j), &got)).To(Succeed())
		g.Expect(*got.Spec.Suspend).To(BeFalse())
		spec := got.Spec.Template.Spec
		g.Expect(spec.SchedulingGates).To(BeEmpty(), "node fit Check sends no pod anywhere")
		g.Expect(spec.NodeSelector).NotTo(HaveKey(hostKey))
		g.Expect(spec.NodeSelector).To(HaveKeyWithValue(pool, f.ns))
		g.Expect(got.Spec.Template.Labels).To(HaveKeyWithValue(musterv1beta1.PodSetLabel, "main"), "its pods must be known to node capacity")
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestNodeFitPinSendsThePodsToTheirNodes(t *testing.T) {
	f := plainPool(t, 2, musterv1beta1.NodeFitPin)
	j := MakeJob("pinned", f.ns).Queue(f.lq).Parallelism(4).Request(gpu, "4").Obj()
	env.CreateAll(t, j)
	g := NewWithT(t)
	g.Expect(placement(t, j)).To(Equal(map[string]int32{f.nodes[0]: 2, f.nodes[1]: 2}))
	g.Eventually(func(g Gomega) {
		var got batchv1.Job
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(j), &got)).To(Succeed())
		g.Expect(got.Spec.Template.Spec.SchedulingGates).To(ContainElement(corev1.PodSchedulingGate{Name: musterv1beta1.TopologySchedulingGate}))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestNodeFitNoneAdmitsOnQuotaAlone(t *testing.T) {
	// For pools whose nodes come with the job: no node at all, admitted.
	f := plainPool(t, 0, musterv1beta1.NodeFitNone)
	j := MakeJob("quota", f.ns).Queue(f.lq).Parallelism(2).Request(gpu, "4").Obj()
	env.CreateAll(t, j)
	NewWithT(t).Eventually(func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(wl.Status.Admission).NotTo(BeNil())
		g.Expect(wl.Status.Admission.PodSetAssignments[0].TopologyAssignment).To(BeNil())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestNodeFitCannotBeTurnedOffWhileInUse(t *testing.T) {
	f := plainPool(t, 1, "")
	j := MakeJob("one", f.ns).Queue(f.lq).Parallelism(1).Request(gpu, "1").Obj()
	env.CreateAll(t, j)
	placement(t, j)
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		var rf musterv1beta1.ResourceFlavor
		g.Expect(env.Client.Get(context.Background(), objectKey(f.flavor), &rf)).To(Succeed())
		g.Expect(rf.Finalizers).NotTo(BeEmpty())
		rf.Spec.NodeFit = musterv1beta1.NodeFitNone
		err := env.Client.Update(context.Background(), &rf)
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).To(ContainSubstring("spec.nodeFit"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}
