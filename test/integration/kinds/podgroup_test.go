package kinds

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

// groupWorkload is the Workload of a pod group: the group's name.
func groupWorkload(g Gomega, ns, group string) *musterv1beta1.Workload {
	var wl musterv1beta1.Workload
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: group}, &wl)).To(Succeed())
	return &wl
}

func createPods(t *testing.T, pods ...*corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		NewWithT(t).Expect(env.Client.Create(context.Background(), p)).To(Succeed())
		NewWithT(t).Expect(admissionGated(p)).To(BeTrue(), "pod %s is created behind the admission gate", p.Name)
	}
}

// A group waits for all its Pods, is one Workload with a pod set per
// shape, and is admitted whole: every Pod loses its gate with its flavor's
// node selector. A second group (Kueue's keys) waits for the quota and
// gets it when all the first's Pods have succeeded.
func TestPodGroupIsAdmittedWholeOnceAllItsPodsExist(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ns, _ := setup(t, "5")
	driver := MakePod("driver", ns).Queue("main").Group("train", 3).Request(gpu, "1").Obj()
	w0 := MakePod("w0", ns).Queue("main").Group("train", 3).Request(gpu, "2").Obj()
	w1 := MakePod("w1", ns).Queue("main").Group("train", 3).Request(gpu, "2").Obj()
	createPods(t, driver, w0)
	g.Consistently(func(g Gomega) {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "train"}, &musterv1beta1.Workload{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no Workload while the group lacks a Pod: %v", err)
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
	createPods(t, w1)
	eventually(t, func(g Gomega) {
		wl := groupWorkload(g, ns, "train")
		g.Expect(wl.Spec.PodSets).To(ConsistOf(HaveField("Count", int32(1)), HaveField("Count", int32(2))), "one pod set per shape")
		g.Expect(workload.IsAdmitted(wl)).To(BeTrue())
		for _, p := range []*corev1.Pod{driver, w0, w1} {
			got := getPod(g, p)
			g.Expect(admissionGated(got)).To(BeFalse(), "pod %s started", p.Name)
			g.Expect(got.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
		}
	})

	next := func(name string) *corev1.Pod {
		return MakePod(name, ns).Label(musterv1beta1.KueueQueueNameLabel, "main").Label("kueue.x-k8s.io/pod-group-name", "next").
			Annotation("kueue.x-k8s.io/pod-group-total-count", "2").Request(gpu, "2").Obj()
	}
	n0, n1 := next("n0"), next("n1")
	createPods(t, n0, n1)
	eventually(t, func(g Gomega) { pendingWith(g, groupWorkload(g, ns, "next"), "nvidia.com/gpu") })

	setPhase(t, driver, corev1.PodSucceeded)
	setPhase(t, w0, corev1.PodSucceeded)
	g.Consistently(func(g Gomega) {
		g.Expect(workload.IsFinished(groupWorkload(g, ns, "train"))).To(BeFalse(), "one Pod of three still runs")
	}, time.Second, 200*time.Millisecond).Should(Succeed())
	setPhase(t, w1, corev1.PodSucceeded)
	eventually(t, func(g Gomega) {
		wl := groupWorkload(g, ns, "train")
		g.Expect(workload.IsFinished(wl)).To(BeTrue())
		g.Expect(meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadFinished).Message).To(ContainSubstring("3/3"))
		g.Expect(admissionGated(getPod(g, n0))).To(BeFalse(), "the second group runs on the quota the first released")
		g.Expect(admissionGated(getPod(g, n1))).To(BeFalse())
	})
}

// A failed Pod of a running group keeps the group's quota and its
// replacement joins; a Pod beyond the group's size waits at the gate. A
// failed Pod marked not retriable ends the group once none runs, and no
// other Pod starts meanwhile.
func TestPodGroupReplacesFailedPodsAndKeepsItsSize(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ns, _ := setup(t, "4")
	a := MakePod("a", ns).Queue("main").Group("grp", 2).Request(gpu, "2").Obj()
	b := MakePod("b", ns).Queue("main").Group("grp", 2).Request(gpu, "2").Annotation("muster.dev/retriable-in-group", "false").Obj()
	createPods(t, a, b)
	eventually(t, func(g Gomega) {
		g.Expect(admissionGated(getPod(g, a))).To(BeFalse())
		g.Expect(admissionGated(getPod(g, b))).To(BeFalse())
	})

	setPhase(t, a, corev1.PodFailed)
	replacement := MakePod("a2", ns).Queue("main").Group("grp", 2).Request(gpu, "2").Obj()
	extra := MakePod("extra", ns).Queue("main").Group("grp", 2).Request(gpu, "2").Obj()
	createPods(t, replacement)
	eventually(t, func(g Gomega) {
		g.Expect(admissionGated(getPod(g, replacement))).To(BeFalse(), "the replacement joins the admitted group")
		g.Expect(workload.IsAdmitted(groupWorkload(g, ns, "grp"))).To(BeTrue(), "a failed Pod does not end the group")
	})
	createPods(t, extra)
	g.Consistently(func(g Gomega) {
		g.Expect(admissionGated(getPod(g, extra))).To(BeTrue(), "the group already runs its two Pods")
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())

	setPhase(t, b, corev1.PodFailed)
	setPhase(t, replacement, corev1.PodFailed)
	eventually(t, func(g Gomega) {
		wl := groupWorkload(g, ns, "grp")
		g.Expect(workload.IsFinished(wl)).To(BeTrue(), "b may not be replaced, and no Pod runs")
		g.Expect(admissionGated(getPod(g, extra))).To(BeTrue(), "nothing starts after b failed")
		g.Expect(meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadFinished).Reason).To(Equal(musterv1beta1.ReasonFailed))
	})
}

// An evicted group's running Pods are deleted, then its Workload with
// them; a waiting Pod of the group keeps it queued instead.
func TestEvictedPodGroupIsDeleted(t *testing.T) {
	env.StartManager(t)
	ns, _ := setup(t, "4")
	a := MakePod("a", ns).Queue("main").Group("grp", 2).Request(gpu, "2").Obj()
	b := MakePod("b", ns).Queue("main").Group("grp", 2).Request(gpu, "2").Obj()
	createPods(t, a, b)
	eventually(t, func(g Gomega) { g.Expect(workload.IsAdmitted(groupWorkload(g, ns, "grp"))).To(BeTrue()) })
	eventually(t, func(g Gomega) {
		wl := groupWorkload(g, ns, "grp")
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: musterv1beta1.WorkloadEvicted,
			Status: metav1.ConditionTrue, Reason: musterv1beta1.ReasonPreempted, Message: "evicted by the test"})
		g.Expect(env.Client.Status().Update(context.Background(), wl)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		for _, p := range []*corev1.Pod{a, b} {
			err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), &corev1.Pod{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "pod %s is deleted: %v", p.Name, err)
		}
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "grp"}, &musterv1beta1.Workload{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the workload goes with its Pods: %v", err)
	})
}

// A group Pod that cannot be admitted as one is refused when it is
// created, with what to fix; its group's Pods that disagree on the size
// are said to be so on each of them.
func TestPodGroupBadInputIsRefused(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ns, _ := setup(t, "4")
	noCount := MakePod("no-count", ns).Queue("main").Label("muster.dev/pod-group-name", "grp").Obj()
	err := env.Client.Create(context.Background(), noCount)
	g.Expect(err).To(MatchError(ContainSubstring("pod-group-total-count")))
	badCount := MakePod("bad-count", ns).Queue("main").Group("grp", 0).Obj()
	g.Expect(env.Client.Create(context.Background(), badCount)).To(MatchError(ContainSubstring("positive whole number")))
	badName := MakePod("bad-name", ns).Queue("main").Group("Not_A_Name", 2).Obj()
	g.Expect(env.Client.Create(context.Background(), badName)).To(MatchError(ContainSubstring("names the group's Workload")))

	x := MakePod("x", ns).Queue("main").Group("mixed", 2).Obj()
	y := MakePod("y", ns).Queue("main").Group("mixed", 3).Obj()
	createPods(t, x, y)
	eventually(t, func(g Gomega) {
		var evs corev1.EventList
		g.Expect(env.Client.List(context.Background(), &evs, client.InNamespace(ns))).To(Succeed())
		g.Expect(evs.Items).To(ContainElement(And(HaveField("Reason", "InvalidPodGroup"), HaveField("InvolvedObject.Name", "y"),
			HaveField("Message", ContainSubstring("different sizes")))))
	})
}
