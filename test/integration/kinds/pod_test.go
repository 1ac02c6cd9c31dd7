package kinds

import (
	"context"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

func getPod(g Gomega, p *corev1.Pod) *corev1.Pod {
	var got corev1.Pod
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), &got)).To(Succeed())
	return &got
}

func admissionGated(p *corev1.Pod) bool {
	return slices.Contains(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: musterv1beta1.AdmissionSchedulingGate})
}

// setPhase writes a Pod's phase, as its kubelet would.
func setPhase(t *testing.T, p *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	eventually(t, func(g Gomega) {
		got := getPod(g, p)
		got.Status.Phase = phase
		g.Expect(env.Client.Status().Update(context.Background(), got)).To(Succeed())
	})
}

// A Pod that names a queue (Kueue's label too) is created behind the
// admission gate, is one Workload, and on admission loses the gate and
// gains the flavor's node selector and toleration; a second waits for the
// quota and gets it when the first succeeds.
func TestPodIsGatedAdmittedAndReleasedWhenItSucceeds(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "4")
	first := MakePod("first", ns).Queue("main").Request(gpu, "4").Obj()
	second := MakePod("second", ns).Label(musterv1beta1.KueueQueueNameLabel, "main").Request(gpu, "4").Obj()
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Expect(admissionGated(first)).To(BeTrue(), "created behind the admission gate")
	eventually(t, func(g Gomega) {
		got := getPod(g, first)
		g.Expect(admissionGated(got)).To(BeFalse())
		g.Expect(got.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
		g.Expect(got.Spec.Tolerations).To(ContainElement(HaveField("Key", "gpu")))
		g.Expect(workloadOf(g, "Pod", first).Spec.PodSets).To(HaveLen(1))
	})
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	g.Expect(admissionGated(second)).To(BeTrue(), "Kueue's queue label gates it too")
	eventually(t, func(g Gomega) {
		pendingWith(g, workloadOf(g, "Pod", second), "nvidia.com/gpu")
	})

	setPhase(t, first, corev1.PodSucceeded)
	eventually(t, func(g Gomega) {
		g.Expect(workload.IsFinished(workloadOf(g, "Pod", first))).To(BeTrue())
		g.Expect(admissionGated(getPod(g, second))).To(BeFalse(), "admitted on the quota the first released")
	})
}

// A preempted Pod cannot be suspended: it is deleted, and its Workload
// with it, so its quota is free.
func TestEvictedPodIsDeleted(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ns, _ := setup(t, "4")
	p := MakePod("evicted", ns).Queue("main").Request(gpu, "4").Obj()
	g.Expect(env.Client.Create(context.Background(), p)).To(Succeed())
	eventually(t, func(g Gomega) { g.Expect(admissionGated(getPod(g, p))).To(BeFalse()) })
	wl := workloadOf(g, "Pod", p)
	evict(t, "Pod", p)
	eventually(t, func(g Gomega) {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), &corev1.Pod{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the pod is deleted: %v", err)
		err = env.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), &musterv1beta1.Workload{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "its workload goes with it: %v", err)
	})
}

// Pods that are not Muster's stay as written: one without a queue label
// (the webhooks never see it), and one a Job controls, queue label
// copied from the template or not (the Job holds the quota for it).
func TestPodsThatAreNotMusterssAreLeftAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "4")
	plain := MakePod("plain", ns).Request(gpu, "1").Obj()
	owned := MakePod("owned", ns).Queue("main").Request(gpu, "1").Obj()
	owner := MakeJob("owner", ns).Obj()
	g.Expect(env.Client.Create(ctx, owner)).To(Succeed())
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: owner.Name, UID: owner.UID,
		Controller: ptr.To(true)}}
	g.Expect(env.Client.Create(ctx, plain)).To(Succeed())
	g.Expect(env.Client.Create(ctx, owned)).To(Succeed())
	g.Expect(plain.Spec.SchedulingGates).To(BeEmpty())
	g.Expect(owned.Spec.SchedulingGates).To(BeEmpty())
	g.Consistently(func(g Gomega) {
		var wls musterv1beta1.WorkloadList
		g.Expect(env.Client.List(ctx, &wls, client.InNamespace(ns))).To(Succeed())
		g.Expect(wls.Items).To(BeEmpty())
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
}
