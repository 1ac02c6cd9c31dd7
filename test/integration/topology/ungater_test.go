package topology

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/test/framework"
)

// jobPods creates the job's pods from its template, as the Job controller
// would, with completion indexes.
func jobPods(t *testing.T, j *batchv1.Job, n int) []string {
	t.Helper()
	job := &batchv1.Job{}
	NewWithT(t).Eventually(func(g Gomega) {
		job = env.GetJob(g, j)
		g.Expect(framework.IsSuspended(job)).To(BeFalse())
	}, framework.Timeout, framework.Interval).Should(Succeed())
	var names []string
	for i := range n {
		tpl := job.Spec.Template.DeepCopy()
		labels := map[string]string{batchv1.JobCompletionIndexAnnotation: fmt.Sprint(i)}
		for k, v := range tpl.Labels {
			labels[k] = v
		}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", j.Name, i), Namespace: j.Namespace,
			Labels: labels, Annotations: tpl.Annotations}, Spec: tpl.Spec}
		NewWithT(t).Expect(env.Client.Create(context.Background(), p)).To(Succeed())
		names = append(names, p.Name)
	}
	return names
}

func TestUngaterReleasesEachPodToItsNode(t *testing.T) {
	f := newFabric(t, 1, 3, "64")
	j := f.job("pair", 2, "8", musterv1beta1.PodSetRequiredTopologyAnnotation, rackKey)
	env.CreateAll(t, j)
	placed := placement(t, j)
	pods := jobPods(t, j, 2)
	NewWithT(t).Eventually(func(g Gomega) {
		seen := map[string]int32{}
		for _, name := range pods {
			var p corev1.Pod
			g.Expect(env.Client.Get(context.Background(), objectMetaKey(f.ns, name), &p)).To(Succeed())
			g.Expect(p.Spec.SchedulingGates).To(BeEmpty(), "pod %s still gated", name)
			seen[p.Spec.NodeSelector[hostKey]]++
		}
		g.Expect(seen).To(Equal(placed))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestUngaterHoldsPodsBeyondThePlacement(t *testing.T) {
	// A replacement pod created while the old one still runs finds no
	// free slot: it stays gated until the old one ends.
	f := newFabric(t, 1, 2, "64")
	j := f.job("one", 2, "8", musterv1beta1.PodSetRequiredTopologyAnnotation, rackKey)
	env.CreateAll(t, j)
	placement(t, j)
	pods := jobPods(t, j, 3)
	NewWithT(t).Eventually(func(g Gomega) {
		gated := 0
		for _, name := range pods {
			var p corev1.Pod
			g.Expect(env.Client.Get(context.Background(), objectMetaKey(f.ns, name), &p)).To(Succeed())
			if len(p.Spec.SchedulingGates) > 0 {
				gated++
			}
		}
		g.Expect(gated).To(Equal(1))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	framework.HoldsFor(t, func(g Gomega) {
		var p corev1.Pod
		g.Expect(env.Client.Get(context.Background(), objectMetaKey(f.ns, pods[2]), &p)).To(Succeed())
		g.Expect(p.Spec.SchedulingGates).NotTo(BeEmpty())
	})
}

func TestFailedNodeIsReplacedInItsRack(t *testing.T) {
	f := newFabric(t, 2, 3, "64")
	j := f.job("pair", 2, "8", musterv1beta1.PodSetRequiredTopologyAnnotation, rackKey)
	env.CreateAll(t, j)
	before := placement(t, j)
	var lost string
	for n := range before {
		lost = n
		break
	}
	setReady(t, lost, false)
	NewWithT(t).Eventually(func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(wl.Status.Admission).NotTo(BeNil())
		now := placedPods(g, wl)
		g.Expect(now).NotTo(HaveKey(lost))
		g.Expect(now).To(HaveLen(2))
		g.Expect(racks(now)).To(Equal(racks(before)))
		g.Expect(eventReasons(g, f.ns, wl.Name)).To(ContainElement(musterv1beta1.ReasonNodeReplaced))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestFailedNodeWithoutRoomEvictsTheWorkload(t *testing.T) {
	f := newFabric(t, 1, 2, "64")
	j := f.job("pair", 2, "8", musterv1beta1.PodSetRequiredTopologyAnnotation, rackKey)
	env.CreateAll(t, j)
	before := placement(t, j)
	for n := range before {
		setReady(t, n, false)
		break
	}
	NewWithT(t).Eventually(func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(eventReasons(g, f.ns, wl.Name)).To(ContainElement(musterv1beta1.ReasonNodeFailures))
		g.Expect(framework.IsSuspended(env.GetJob(g, j))).To(BeTrue())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}
