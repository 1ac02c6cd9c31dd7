//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

// trainJobDone reports whether the trainer marked a TrainJob Complete.
func trainJobDone(g Gomega, tj *unstructured.Unstructured) bool {
	got := tj.DeepCopy()
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(tj), got)).To(Succeed())
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	for _, x := range conds {
		if m, ok := x.(map[string]any); ok && m["type"] == "Complete" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// TestTrainJobRunsWholeWithTheTrainer: with the real Kubeflow Trainer v2
// controller and its webhooks (on the real JobSet controller), two
// TrainJobs of a dataset initializer and 8 one-GPU nodes on a
// ClusterTrainingRuntime, in a Kueue user's queue of 8 GPUs: the first is
// admitted whole, its placement reaches its JobSet through Muster's runtime
// patch (its nodes run on the h100 flavor), its JobSet is its part; the
// second waits whole and runs once the trainer marks the first Complete.
func TestTrainJobRunsWholeWithTheTrainer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	queues(t, ns, "0", "8")
	rt := MakeClusterTrainingRuntime("torch-"+ns).Initializer("dataset-initializer", "cpu", "1").Trainer("node", "cpu", "1").
		PodAnnotation("muster.dev/runtime", "15s").Obj()
	createAll(t, rt)
	trainJob := func(name string) *unstructured.Unstructured {
		return MakeTrainJob(name, ns, rt.GetName()).Queue("main").NumNodes(8).ResourcesPerNode(gpu, "1").Obj()
	}
	first, second := trainJob("first"), trainJob("second")
	createAll(t, first)
	nodes := func(name string) map[string]string {
		return map[string]string{jobsetv1alpha2.JobSetNameKey: name, jobsetv1alpha2.ReplicatedJobNameKey: "node"}
	}
	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, nodes(first.GetName()))
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"h100": 8}), "the first TrainJob's 8 nodes run on the h100 flavor")
	createAll(t, second)
	g.Consistently(func(g Gomega) bool {
		got := second.DeepCopy()
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(second), got)).To(Succeed())
		s, _, _ := unstructured.NestedBool(got.Object, "spec", "suspend")
		return s
	}, 3*time.Second, time.Second).Should(BeTrue(), "the second waits: its 8 GPUs are the first's")
	var wls musterv1beta1.WorkloadList
	g.Expect(c.List(ctx, &wls, client.InNamespace(ns))).To(Succeed())
	g.Expect(wls.Items).To(HaveLen(2), "one Workload per TrainJob, none for their JobSets")

	g.Eventually(func(g Gomega) bool { return trainJobDone(g, first) }, timeout, time.Second).Should(BeTrue(), "the trainer completes the first")
	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, nodes(second.GetName()))
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"h100": 8}), "the second runs on the quota the first released")
	g.Eventually(func(g Gomega) bool { return trainJobDone(g, second) }, timeout, time.Second).Should(BeTrue())
}

// TestAPreemptedTrainJobRunsAgain: a TrainJob borrowing another queue's
// GPUs is preempted when that queue's own job arrives: the trainer
// suspends its JobSet and its pods go, Muster takes its placement back
// (only once the JobSet's Jobs are gone: the trainer refuses a patch
// change before), and once the owner's job is done it is admitted again
// and its 16 nodes run again.
func TestAPreemptedTrainJobRunsAgain(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	reclaimingQueues(t, ns)
	rt := MakeClusterTrainingRuntime("torch-"+ns).Trainer("node", "cpu", "1").Obj()
	createAll(t, rt)

	tj := MakeTrainJob("borrower", ns, rt.GetName()).Queue("b").NumNodes(16).ResourcesPerNode(gpu, "1").Obj()
	createAll(t, tj)
	nodes := map[string]string{jobsetv1alpha2.JobSetNameKey: tj.GetName()}
	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, nodes)
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"a100": 16}), "b borrows a's 8 idle GPUs")

	createAll(t, gpuJob(ns, "owner", "a", 8, "20s"))
	g.Eventually(func(g Gomega) []int {
		running, _ := countPods(g, ns, nodes)
		o, _, _, _ := podsOf(g, ns, "owner")
		return []int{running, o}
	}, timeout, time.Second).Should(Equal([]int{0, 8}), "a reclaims its quota: the TrainJob's pods go, the owner's are bound")
	g.Eventually(func(g Gomega) bool {
		got := tj.DeepCopy()
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(tj), got)).To(Succeed())
		patches, _, _ := unstructured.NestedSlice(got.Object, "spec", "runtimePatches")
		for _, p := range patches {
			if m := p.(map[string]any); m["manager"] == "muster.dev/manager" {
				_, placed := m["trainingRuntimeSpec"]
				return placed
			}
		}
		return false
	}, timeout, time.Second).Should(BeFalse(), "its placement taken back")

	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, nodes)
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"a100": 16}), "admitted again once the owner's job is done")
}
