//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

// TestJobSetRunsWholeWithTheJobSetController: with the real JobSet
// controller and its webhooks, a JobSet of a driver and two child Jobs of
// four 1-GPU workers is admitted whole onto the h100 flavor; its child Jobs
// are its parts (no Workload of their own); a second JobSet of the same
// size waits for the whole of its quota, and runs once the first's Jobs
// complete and the JobSet controller marks it Completed.
func TestJobSetRunsWholeWithTheJobSetController(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	queues(t, ns, "0", "8")
	jobSet := func(name string) *jobsetv1alpha2.JobSet {
		js := MakeJobSet(name, ns).Queue("main").
			ReplicatedJob("driver", 1, 1, "cpu", "1").
			ReplicatedJob("workers", 2, 4, gpu, "1").Obj()
		for i := range js.Spec.ReplicatedJobs {
			js.Spec.ReplicatedJobs[i].Template.Spec.Template.Annotations = map[string]string{"muster.dev/runtime": "15s"}
		}
		return js
	}
	first, second := jobSet("first"), jobSet("second")
	createAll(t, first)
	workers := func(js string) map[string]string {
		return map[string]string{jobsetv1alpha2.JobSetNameKey: js, jobsetv1alpha2.ReplicatedJobNameKey: "workers"}
	}
	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, workers(first.Name))
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"h100": 8}), "the first JobSet's 8 workers run on the h100 flavor")
	createAll(t, second)
	var got jobsetv1alpha2.JobSet
	g.Consistently(func(g Gomega) bool {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(second), &got)).To(Succeed())
		return ptr.Deref(got.Spec.Suspend, false)
	}, 3*time.Second, time.Second).Should(BeTrue(), "the second waits: its 8 GPUs are the first's")
	var wls musterv1beta1.WorkloadList
	g.Expect(c.List(ctx, &wls, client.InNamespace(ns))).To(Succeed())
	g.Expect(wls.Items).To(HaveLen(2), "one Workload per JobSet, none for their child Jobs")

	g.Eventually(func(g Gomega) bool {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(first), &got)).To(Succeed())
		return meta.IsStatusConditionTrue(got.Status.Conditions, string(jobsetv1alpha2.JobSetCompleted))
	}, timeout, time.Second).Should(BeTrue(), "the JobSet controller completes the first")
	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, workers(second.Name))
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"h100": 8}), "the second runs on the quota the first released")
	g.Eventually(func(g Gomega) bool {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(second), &got)).To(Succeed())
		return meta.IsStatusConditionTrue(got.Status.Conditions, string(jobsetv1alpha2.JobSetCompleted))
	}, timeout, time.Second).Should(BeTrue())
}

// TestJobSetSliceOfAChildJobIsOneRack: a replicated job of two child Jobs
// of 32 one-GPU pods, each Job a slice that requires a rack (Kueue's
// podset-slice-* annotations on the template, slice size the Job's
// parallelism): the 64 pods take two racks, and each child Job's pods are
// in one of them, however the JobSet controller's pods arrive.
func TestJobSetSliceOfAChildJobIsOneRack(t *testing.T) {
	g := NewWithT(t)
	p := topologyPool(t)
	ns := namespace(t)
	topologyQueue(t, ns, "128", nil)
	js := MakeJobSet("sliced", ns).Queue("main").ReplicatedJob("workers", 2, 32, gpu, "1").Obj()
	js.Spec.ReplicatedJobs[0].Template.Spec.Template.Annotations = map[string]string{
		"kueue.x-k8s.io/podset-slice-required-topology": rackLabel,
		"kueue.x-k8s.io/podset-slice-size":              "32",
	}
	createAll(t, js)

	g.Eventually(func(g Gomega) {
		labels := map[string]string{jobsetv1alpha2.JobSetNameKey: js.Name}
		nodes := placedAsAssigned(g, ns, "JobSet", js.Name, labels, 64)
		g.Expect(p.racksOf(nodes)).To(HaveLen(2), "pods on %v", nodes)
		var pods corev1.PodList
		g.Expect(c.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
		racksOfJob := map[string]map[string]bool{}
		for _, pod := range pods.Items {
			job := pod.Labels[jobsetv1alpha2.JobIndexKey]
			if racksOfJob[job] == nil {
				racksOfJob[job] = map[string]bool{}
			}
			racksOfJob[job][p.rackOf[pod.Spec.NodeName]] = true
		}
		g.Expect(racksOfJob).To(HaveLen(2))
		for job, racks := range racksOfJob {
			g.Expect(racks).To(HaveLen(1), "child Job %s's pods in one rack: %v", job, racks)
		}
	}, timeout, time.Second).Should(Succeed())
}
