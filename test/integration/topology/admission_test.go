package topology

import (
	"context"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

func TestRequiredRackAdmitsTheJobIntoOneRack(t *testing.T) {
	f := newFabric(t, 2, 4, "64")
	// Rack 1 has an unmanaged pod on it: the 32-GPU job takes rack 2 whole.
	bindPod(t, f.ns, "other", f.ns+"-r1-n1", "2")
	j := f.job("train", 4, "8", musterv1beta1.PodSetRequiredTopologyAnnotation, rackKey)
	env.CreateAll(t, j)
	got := placement(t, j)
	g := NewWithT(t)
	g.Expect(racks(got)).To(Equal([]string{f.ns + "-r2"}))
	g.Expect(got).To(HaveLen(4))
	// The job runs with its pods gated for the ungater.
	g.Eventually(func(g Gomega) {
		job := env.GetJob(g, j)
		g.Expect(framework.IsSuspended(job)).To(BeFalse())
		tpl := job.Spec.Template
		g.Expect(tpl.Spec.SchedulingGates).To(ContainElement(corev1.PodSchedulingGate{Name: musterv1beta1.TopologySchedulingGate}))
		g.Expect(tpl.Annotations).To(HaveKey(musterv1beta1.WorkloadAnnotation))
		g.Expect(tpl.Labels).To(HaveKeyWithValue(musterv1beta1.PodSetLabel, "main"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestFragmentedCapacityWaitsWithAReason(t *testing.T) {
	// Kueue #4329: 4 GPUs free as 2 + 2; quota would allow it.
	f := newFabric(t, 1, 2, "64")
	bindPod(t, f.ns, "a", f.ns+"-r1-n1", "6")
	bindPod(t, f.ns, "b", f.ns+"-r1-n2", "6")
	j := f.job("one", 1, "4", musterv1beta1.PodSetRequiredTopologyAnnotation, hostKey)
	env.CreateAll(t, j)
	env.ExpectJobPending(t, j, "in one kubernetes.io/hostname")
	env.ExpectJobPending(t, j, "quota allows 64 nvidia.com/gpu")
	// Once one of the pods ends, there is a node for it.
	// Force-deleted: a pod bound to a node is otherwise terminating (and
	// still counted) until its kubelet confirms.
	NewWithT(t).Expect(env.Client.Delete(context.Background(), &corev1.Pod{ObjectMeta: objectMeta(f.ns, "a")}, client.GracePeriodSeconds(0))).To(Succeed())
	NewWithT(t).Expect(placement(t, j)).To(Equal(map[string]int32{f.ns + "-r1-n1": 1}))
}

func TestPreferredSpillsToTheFewestRacks(t *testing.T) {
	f := newFabric(t, 3, 2, "64")
	j := f.job("wide", 4, "8", musterv1beta1.PodSetPreferredTopologyAnnotation, rackKey)
	env.CreateAll(t, j)
	NewWithT(t).Expect(racks(placement(t, j))).To(HaveLen(2))
}

func TestKueueTopologyAnnotationsRunUnchanged(t *testing.T) {
	f := newFabric(t, 2, 2, "64")
	j := MakeJob("kueue", f.ns).Label(musterv1beta1.KueueQueueNameLabel, f.lq).Parallelism(2).Request(gpu, "8").
		PodAnnotation("kueue.x-k8s.io/podset-required-topology", rackKey).Obj()
	env.CreateAll(t, j)
	NewWithT(t).Expect(racks(placement(t, j))).To(HaveLen(1))
}

func TestTwoJobsNeverShareANodeTheyBothFill(t *testing.T) {
	f := newFabric(t, 1, 3, "64")
	a := f.job("a", 2, "8", musterv1beta1.PodSetRequiredTopologyAnnotation, rackKey)
	b := f.job("b", 2, "8", musterv1beta1.PodSetRequiredTopologyAnnotation, rackKey)
	env.CreateAll(t, a, b)
	// 3 nodes hold one of the two; the other waits for room in the rack,
	// once it has been decided on, and keeps waiting.
	exactlyOne := func(g Gomega) {
		wa, wb := env.WorkloadOfJob(g, a), env.WorkloadOfJob(g, b)
		g.Expect((wa.Status.Admission == nil) != (wb.Status.Admission == nil)).To(BeTrue(), "exactly one admitted")
		waiting := wa
		if wa.Status.Admission != nil {
			waiting = wb
		}
		c := meta.FindStatusCondition(waiting.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(ContainSubstring("in one "+rackKey), "decided on: it waits for room in the rack")
	}
	g := NewWithT(t)
	g.Eventually(exactlyOne, framework.Timeout, framework.Interval).Should(Succeed())
	g.Consistently(exactlyOne, 2*time.Second, framework.Interval).Should(Succeed())
}

func TestInvalidTopologyAnnotationsAreRefused(t *testing.T) {
	f := newFabric(t, 1, 1, "8")
	cases := map[string]struct {
		annotations map[string]string
		want        string
	}{
		"two modes": {map[string]string{musterv1beta1.PodSetRequiredTopologyAnnotation: rackKey, musterv1beta1.PodSetPreferredTopologyAnnotation: rackKey},
			"must not contain more than one topology annotation"},
		"slice without size": {map[string]string{musterv1beta1.PodSetSliceRequiredTopologyAnnotation: rackKey}, "must be set when"},
		"size not a number": {map[string]string{musterv1beta1.PodSetSliceRequiredTopologyAnnotation: rackKey, musterv1beta1.PodSetSliceSizeAnnotation: "two"},
			"must be a numeric value"},
		"unconstrained not a bool": {map[string]string{"kueue.x-k8s.io/podset-unconstrained-topology": "yes"}, "must be a boolean value"},
		"group without a level":    {map[string]string{musterv1beta1.PodSetGroupNameAnnotation: "g"}, "neither a required nor a preferred"},
		"level not a label":        {map[string]string{musterv1beta1.PodSetRequiredTopologyAnnotation: "not a label!"}, "name part must consist of"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := MakeJob("bad", f.ns).Queue(f.lq).Request(gpu, "1")
			for k, v := range tc.annotations {
				b.PodAnnotation(k, v)
			}
			err := env.Client.Create(context.Background(), b.Obj())
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

func TestTopologyStatusCountsItsNodes(t *testing.T) {
	f := newFabric(t, 2, 3, "8")
	NewWithT(t).Eventually(func(g Gomega) {
		var topo musterv1beta1.Topology
		g.Expect(env.Client.Get(context.Background(), objectKey(f.topology), &topo)).To(Succeed())
		// Other tests' nodes carry the same level labels: at least ours.
		g.Expect(topo.Status.Nodes).To(BeNumerically(">=", 6))
		g.Expect(slices.Contains([]int{3}, len(topo.Status.Domains))).To(BeTrue())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestQueueWaitsForItsFlavorsTopology(t *testing.T) {
	// The flavor and queue come first, the Topology last: the queue is
	// inactive, saying why, and the waiting job is admitted once it exists.
	ns := env.NewNamespace(t, "topo", nil)
	createNode(t, MakeNode(ns+"-r1-n1").Label(pool, ns).Label(blockKey, ns+"-b1").Label(rackKey, ns+"-r1").Allocatable(gpu, "8").Obj())
	cq := MakeClusterQueue("cq-" + ns).ResourceGroup(MakeFlavorQuotas("f-"+ns).Resource(gpu, "8").Obj()).Obj()
	env.CreateAll(t, MakeResourceFlavor("f-"+ns).NodeLabel(pool, ns).TopologyName("t-"+ns).Obj(), cq, MakeLocalQueue("lq", ns).ClusterQueue(cq.Name).Obj())
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		var got musterv1beta1.ClusterQueue
		g.Expect(env.Client.Get(context.Background(), objectKey(cq.Name), &got)).To(Succeed())
		c := meta.FindStatusCondition(got.Status.Conditions, musterv1beta1.ClusterQueueActive)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(musterv1beta1.ReasonTopologyNotFound))
		g.Expect(c.Message).To(ContainSubstring("Topology t-" + ns + " not found"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	j := MakeJob("early", ns).Queue("lq").Request(gpu, "8").PodAnnotation(musterv1beta1.PodSetRequiredTopologyAnnotation, hostKey).Obj()
	env.CreateAll(t, j)
	env.ExpectJobPending(t, j, "inactive")
	env.CreateAll(t, MakeTopology("t-"+ns, blockKey, rackKey, hostKey))
	g.Expect(placement(t, j)).To(Equal(map[string]int32{ns + "-r1-n1": 1}))
}
