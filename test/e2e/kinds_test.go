//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	. "github.com/onsi/gomega"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
