package kinds

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

// appWrapper wraps a Job of workers one-GPU pods (its pods inferred) and
// a one-GPU driver Job whose pod set is declared.
func appWrapper(name, ns string, workers int32) *awv1beta2.AppWrapper {
	return MakeAppWrapper(name, ns).Queue("main").
		Component(MakeJob(name+"-workers", ns).Parallelism(workers).Request(gpu, "1").Obj()).
		Component(MakeJob(name+"-driver", ns).Request(gpu, "1").Obj(), awv1beta2.AppWrapperPodSet{Path: "template.spec.template"}).Obj()
}

func getAppWrapper(g Gomega, aw *awv1beta2.AppWrapper) *awv1beta2.AppWrapper {
	var got awv1beta2.AppWrapper
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(aw), &got)).To(Succeed())
	return &got
}

// An AppWrapper in a Kueue user's queue is created suspended and admitted
// whole, one pod set per wrapped pod template; its placement goes to the
// AppWrapper controller in podSetInfos; a second waits for the whole of its
// quota and gets it when the first succeeds.
func TestAppWrapperIsAdmittedWholeAndReleasedWhenItSucceeds(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "8")
	first, second := appWrapper("first", ns, 7), appWrapper("second", ns, 7)
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Expect(first.Spec.Suspend).To(BeTrue(), "created suspended")
	eventually(t, func(g Gomega) {
		wl := workloadOf(g, "AppWrapper", first)
		g.Expect(wl.Spec.PodSets).To(HaveLen(2))
		g.Expect(wl.Spec.PodSets[0].Count).To(BeEquivalentTo(7))
	})
	eventually(t, func(g Gomega) {
		got := getAppWrapper(g, first)
		g.Expect(got.Spec.Suspend).To(BeFalse())
		for _, c := range got.Spec.Components {
			g.Expect(c.PodSetInfos).To(ConsistOf(HaveField("NodeSelector", HaveKeyWithValue("pool", ns))))
		}
	})
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	eventually(t, func(g Gomega) {
		pendingWith(g, workloadOf(g, "AppWrapper", second), "the whole workload needs 8 nvidia.com/gpu")
	})

	// The AppWrapper controller reports it succeeded (none runs here).
	eventually(t, func(g Gomega) {
		got := getAppWrapper(g, first)
		got.Status.Phase = awv1beta2.AppWrapperSucceeded
		g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		g.Expect(workload.IsFinished(workloadOf(g, "AppWrapper", first))).To(BeTrue())
		g.Expect(getAppWrapper(g, second).Spec.Suspend).To(BeFalse(), "admitted on the quota the first released")
	})
}

// An evicted AppWrapper is suspended and its placement taken back.
func TestAnEvictedAppWrapperLosesItsPlacement(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ns, cq := setup(t, "8")
	aw := appWrapper("evicted", ns, 3)
	g.Expect(env.Client.Create(context.Background(), aw)).To(Succeed())
	eventually(t, func(g Gomega) { g.Expect(getAppWrapper(g, aw).Spec.Components[0].PodSetInfos).NotTo(BeEmpty()) })
	holdQueue(t, cq)
	evict(t, "AppWrapper", aw)
	eventually(t, func(g Gomega) {
		got := getAppWrapper(g, aw)
		g.Expect(got.Spec.Suspend).To(BeTrue())
		for _, c := range got.Spec.Components {
			g.Expect(c.PodSetInfos).To(BeEmpty())
		}
		g.Expect(workloadOf(g, "AppWrapper", aw).Status.Admission).To(BeNil())
	})
}

// A component whose pod set path leads nowhere is refused at submission;
// a Job the AppWrapper controller creates is its part, not gated again.
func TestAppWrapperComponents(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "8")
	bad := MakeAppWrapper("bad", ns).Queue("main").
		Component(MakeJob("j", ns).Obj(), awv1beta2.AppWrapperPodSet{Path: "template.spec.nothing"}).Obj()
	g.Expect(env.Client.Create(ctx, bad)).To(MatchError(ContainSubstring("leads to no pod template")))

	aw := appWrapper("parent", ns, 1)
	g.Expect(env.Client.Create(ctx, aw)).To(Succeed())
	eventually(t, func(g Gomega) { g.Expect(getAppWrapper(g, aw).Spec.Suspend).To(BeFalse()) })
	child := MakeJob("parent-workers", ns).Queue("main").Request(gpu, "1").Obj()
	child.Spec.Suspend = ptr.To(false)
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: awv1beta2.GroupVersion.String(), Kind: "AppWrapper",
		Name: aw.Name, UID: aw.UID, Controller: ptr.To(true)}}
	g.Expect(env.Client.Create(ctx, child)).To(Succeed())
	g.Consistently(func(g Gomega) {
		var got batchv1.Job
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(child), &got)).To(Succeed())
		g.Expect(ptr.Deref(got.Spec.Suspend, true)).To(BeFalse())
		var wls musterv1beta1.WorkloadList
		g.Expect(env.Client.List(ctx, &wls, client.InNamespace(ns))).To(Succeed())
		g.Expect(wls.Items).To(HaveLen(1), "the AppWrapper's Workload only")
	}, "2s", "200ms").Should(Succeed())
}
