//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

// singlePodJob is a Job of one pod of gpus GPUs that runs until deleted.
func singlePodJob(ns, name, gpus string) *batchv1.Job {
	j := MakeJob(name, ns).Queue("main").Parallelism(1).Request(gpu, gpus).Request("cpu", "1").Obj()
	j.Spec.BackoffLimit = ptr.To[int32](0)
	return j
}

// TestNodeFitOnTheDemoFlavors: the demo's a100 flavor names no Topology,
// as most clusters' flavors. With 6 of 8 GPUs used on each of its two
// nodes, 4 GPUs of quota are free but only 2 + 2 on the nodes: a 4-GPU pod
// is not admitted (it would stay Pending, Kueue #4329). It waits, its
// reason naming the closest node, and runs once a node frees.
func TestNodeFitOnTheDemoFlavors(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	queues(t, ns, "16", "0")
	fillers := []*batchv1.Job{singlePodJob(ns, "six-a", "6"), singlePodJob(ns, "six-b", "6")}
	createAll(t, fillers[0], fillers[1])
	var fillNodes []string
	g.Eventually(func(g Gomega) {
		fillNodes = nil
		for _, f := range fillers {
			bound, _, _, nodes := podsOf(g, ns, f.Name)
			g.Expect(bound).To(Equal(1), "%s runs", f.Name)
			fillNodes = append(fillNodes, nodes...)
		}
		g.Expect(sets(fillNodes)).To(HaveLen(2), "one filler per a100 node: %v", fillNodes)
	}, timeout, time.Second).Should(Succeed())

	big := singlePodJob(ns, "four", "4")
	createAll(t, big)
	g.Eventually(func(g Gomega) {
		// The reason names the node that comes closest.
		waitsSaying(g, ns, big.Name, "closest node", "2 nvidia.com/gpu free")
	}, timeout, time.Second).Should(Succeed())
	wl := workloadOf(g, ns, "Job", big.Name)
	t.Logf("%s waits: %s", wl.Name, meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved).Message)
	g.Consistently(func(g Gomega) {
		bound, pending, _, _ := podsOf(g, ns, big.Name)
		g.Expect(bound+pending).To(BeZero(), "the waiting job creates no pods")
	}, 3*time.Second, time.Second).Should(Succeed())

	// A node frees: the job is admitted and its pod runs there.
	g.Expect(c.Delete(context.Background(), fillers[0], client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	g.Eventually(func(g Gomega) {
		bound, _, _, nodes := podsOf(g, ns, big.Name)
		g.Expect(bound).To(Equal(1))
		g.Expect(nodes).To(Equal(fillNodes[:1]), "the node six-a left")
	}, timeout, time.Second).Should(Succeed())
}
