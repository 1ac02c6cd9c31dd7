//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	. "github.com/onsi/gomega"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

// countPods counts the running pods matching labels and their nodes' flavor
// label.
func countPods(g Gomega, ns string, labels map[string]string) (int, map[string]int) {
	var pods corev1.PodList
	g.Expect(c.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
	running, kinds := 0, map[string]int{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running++
			kinds[nodeLabel(g, p.Spec.NodeName, "muster.dev/gpu")]++
		}
	}
	return running, kinds
}

// TestPyTorchJobAndRayClusterRunRealPods: with the training and KubeRay
// operators running, a PyTorchJob (1 Master + 15 Workers) and a RayCluster
// are gated, admitted whole on a flavor each, and their operators create
// real pods there.
func TestPyTorchJobAndRayClusterRunRealPods(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	queues(t, ns, "16", "8")
	pt := MakePyTorchJob("train", ns).Queue("main").Request("Master", gpu, "1").
		Replicas("Worker", 15).Request("Worker", gpu, "1").Obj()
	for _, rs := range pt.Spec.PyTorchReplicaSpecs {
		rs.Template.Annotations = map[string]string{"muster.dev/runtime": "5s"}
	}
	rc := MakeRayCluster("ray", ns).Queue("main").WorkerGroup("gpu", 4, gpu, "2").Obj()
	createAll(t, pt)
	g.Eventually(func(g Gomega) map[string]int {
		n, kinds := countPods(g, ns, map[string]string{"training.kubeflow.org/job-name": "train"})
		g.Expect(n).To(Equal(16))
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"a100": 16}), "the PyTorchJob holds the 16 a100 GPUs")

	createAll(t, rc)
	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, map[string]string{"ray.io/cluster": "ray", "ray.io/group": "gpu"})
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"h100": 4}), "the RayCluster's workers land on the h100 flavor")

	g.Eventually(func(g Gomega) bool {
		var got kftraining.PyTorchJob
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(pt), &got)).To(Succeed())
		for _, cond := range got.Status.Conditions {
			if cond.Type == kftraining.JobSucceeded && cond.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	}, timeout, time.Second).Should(BeTrue())
	var got rayv1.RayCluster
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), &got)).To(Succeed())
}

// TestRayJobIsAdmittedWholeWithItsClusterUngated: with KubeRay running, a
// RayJob is admitted whole and KubeRay builds its RayCluster and submitter
// Job from it; both copy the RayJob's queue label yet are its parts, so
// neither waits for an admission of its own. A second RayJob waits for the
// whole of its quota and gets it once the first is deleted.
func TestRayJobIsAdmittedWholeWithItsClusterUngated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	queues(t, ns, "0", "8")
	rayJob := func(name string) *rayv1.RayJob {
		cluster := MakeRayCluster(name, ns).WorkerGroup("gpu", 4, gpu, "2").Obj()
		return MakeRayJob(name, ns, cluster.Spec).Queue("main").Obj()
	}
	first, second := rayJob("first"), rayJob("second")
	createAll(t, first)
	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, map[string]string{"ray.io/group": "gpu"})
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"h100": 4}), "the RayJob's cluster's workers run on the h100 flavor")
	g.Eventually(func(g Gomega) {
		var submitter batchv1.Job
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: first.Name}, &submitter)).To(Succeed())
		g.Expect(submitter.Spec.Suspend).NotTo(HaveValue(BeTrue()), "KubeRay's submitter Job is not gated again")
	}, timeout, time.Second).Should(Succeed())
	var wls musterv1beta1.WorkloadList
	g.Expect(c.List(ctx, &wls, client.InNamespace(ns))).To(Succeed())
	g.Expect(wls.Items).To(HaveLen(1), "one Workload: the RayJob's, none for its cluster or submitter")

	createAll(t, second)
	g.Consistently(func(g Gomega) bool {
		var got rayv1.RayJob
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(second), &got)).To(Succeed())
		return got.Spec.Suspend
	}, 5*time.Second, time.Second).Should(BeTrue(), "the second waits: its 8 GPUs are the first's")
	g.Expect(c.Delete(ctx, first, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	g.Eventually(func(g Gomega) map[string]int {
		var got rayv1.RayJob
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(second), &got)).To(Succeed())
		g.Expect(got.Status.RayClusterName).NotTo(BeEmpty())
		_, kinds := countPods(g, ns, map[string]string{"ray.io/group": "gpu", "ray.io/cluster": got.Status.RayClusterName})
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"h100": 4}), "the second runs on the quota the first released")
}
