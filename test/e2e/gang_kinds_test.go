//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

// boundPods counts the bound, unfinished pods with the labels.
func boundPods(g Gomega, ns string, labels map[string]string) int {
	var pods corev1.PodList
	g.Expect(c.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
	n := 0
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// gangBindsWhole samples the two jobs' bound pods until done says both
// finished, and checks that kube-scheduler bound each whole in turn.
func gangBindsWhole(t *testing.T, whole int, bound func(Gomega, string) int, done func(Gomega, string) bool) {
	g := NewWithT(t)
	stop := make(chan struct{})
	s := &partialSampler{whole: whole}
	go s.run(stop, func(g Gomega) map[string]int { return map[string]int{"a": bound(g, "a"), "b": bound(g, "b")} })
	g.Eventually(func(g Gomega) bool { return done(g, "a") && done(g, "b") }, timeout, time.Second).Should(BeTrue())
	close(stop)
	s.check(t, g)
	g.Expect(s.maxBound).To(Equal(map[string]int{"a": whole, "b": whole}), "each job was bound whole in turn")
}

// TestGangSchedulerBindsTrainJobsWhole: two TrainJobs of 16 one-GPU nodes
// on the demo's 24 GPUs, both admitted by quota and handed to
// kube-scheduler's gang scheduling; the marks reach the trainer's pods
// through Muster's runtime patch, and each TrainJob is bound whole in turn.
func TestGangSchedulerBindsTrainJobsWhole(t *testing.T) {
	ns := namespace(t)
	gangQueues(t, ns, musterv1beta1.GangKubeScheduler)
	rt := MakeClusterTrainingRuntime("gang-"+ns).Trainer("node", "cpu", "1").PodAnnotation("muster.dev/runtime", "5s").Obj()
	createAll(t, rt)
	for _, name := range []string{"a", "b"} {
		createAll(t, MakeTrainJob(name, ns, rt.GetName()).Queue("main").NumNodes(16).ResourcesPerNode(gpu, "1").Obj())
	}
	gangBindsWhole(t, 16, func(g Gomega, name string) int {
		return boundPods(g, ns, map[string]string{jobsetv1alpha2.JobSetNameKey: name})
	}, func(g Gomega, name string) bool {
		return trainJobDone(g, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": map[string]any{"name": name, "namespace": ns}}})
	})
}

// TestGangSchedulerBindsAppWrappersWhole: the same with two AppWrappers
// of a 16-pod Job each; the marks reach the Jobs' pods through the
// AppWrapper controller's podSetInfos.
func TestGangSchedulerBindsAppWrappersWhole(t *testing.T) {
	ns := namespace(t)
	gangQueues(t, ns, musterv1beta1.GangKubeScheduler)
	for _, name := range []string{"a", "b"} {
		createAll(t, MakeAppWrapper(name, ns).Queue("main").Component(gpuJob(ns, name, "", 16, "5s")).Obj())
	}
	gangBindsWhole(t, 16, func(g Gomega, name string) int {
		return boundPods(g, ns, map[string]string{batchv1.JobNameLabel: name})
	}, func(g Gomega, name string) bool {
		var aw awv1beta2.AppWrapper
		g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &aw)).To(Succeed())
		return aw.Status.Phase == awv1beta2.AppWrapperSucceeded
	})
}
