package kinds

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

func rayCluster(name, ns string, workers int32) *rayv1.RayCluster {
	return MakeRayCluster(name, ns).Queue("main").HeadRequest(gpu, "1").WorkerGroup("gpu-workers", workers, gpu, "2").Obj()
}

func getRayCluster(g Gomega, c *rayv1.RayCluster) *rayv1.RayCluster {
	var got rayv1.RayCluster
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(c), &got)).To(Succeed())
	return &got
}

func expectRayRunning(t *testing.T, c *rayv1.RayCluster, ns string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		got := getRayCluster(g, c)
		g.Expect(ptr.Deref(got.Spec.Suspend, false)).To(BeFalse())
		g.Expect(got.Spec.HeadGroupSpec.Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
		g.Expect(got.Spec.WorkerGroupSpecs[0].Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
	})
}

func TestRayClusterIsGatedAndReleasedOnDelete(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "8")
	first, second := rayCluster("first", ns, 3), rayCluster("second", ns, 3)
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Expect(ptr.Deref(first.Spec.Suspend, false)).To(BeTrue(), "created suspended")
	eventually(t, func(g Gomega) {
		wl := workloadOf(g, "RayCluster", first)
		g.Expect(wl.Spec.PodSets).To(HaveLen(2))
		g.Expect(wl.Spec.PodSets[0].Name).To(Equal("head"))
		g.Expect(wl.Spec.PodSets[1].Name).To(Equal("worker-gpu-workers"))
		g.Expect(wl.Spec.PodSets[1].Count).To(BeEquivalentTo(3))
	})
	expectRayRunning(t, first, ns)

	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	eventually(t, func(g Gomega) {
		pendingWith(g, workloadOf(g, "RayCluster", second), "the whole workload needs 7 nvidia.com/gpu")
	})

	wl := workloadOf(g, "RayCluster", first)
	g.Expect(env.Client.Delete(ctx, first)).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl))).To(BeTrue())
	})
	expectRayRunning(t, second, ns)
}

func TestRayClusterSuspendedByItsUserFinishes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, cq := setup(t, "8")
	c := rayCluster("user-suspends", ns, 1)
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	expectRayRunning(t, c, ns)
	eventually(t, func(g Gomega) {
		got := getRayCluster(g, c)
		got.Spec.Suspend = ptr.To(true)
		g.Expect(env.Client.Update(ctx, got)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		wl := workloadOf(g, "RayCluster", c)
		g.Expect(meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadFinished)).To(BeTrue())
		var q musterv1beta1.ClusterQueue
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: cq}, &q)).To(Succeed())
		g.Expect(q.Status.AdmittedWorkloads).To(BeZero(), "quota released")
	})
}

func TestEvictedRayClusterIsRestored(t *testing.T) {
	env.StartManager(t)
	ns, cq := setup(t, "8")
	c := rayCluster("evicted", ns, 2)
	NewWithT(t).Expect(env.Client.Create(context.Background(), c)).To(Succeed())
	expectRayRunning(t, c, ns)
	holdQueue(t, cq)
	evict(t, "RayCluster", c)
	eventually(t, func(g Gomega) {
		got := getRayCluster(g, c)
		g.Expect(ptr.Deref(got.Spec.Suspend, false)).To(BeTrue())
		g.Expect(got.Spec.HeadGroupSpec.Template.Spec.NodeSelector).To(BeEmpty())
		g.Expect(got.Spec.WorkerGroupSpecs[0].Template.Spec.NodeSelector).To(BeEmpty())
		wl := workloadOf(g, "RayCluster", c)
		g.Expect(wl.Status.Admission).To(BeNil())
		g.Expect(meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadFinished)).To(BeFalse(), "an eviction is not the user's suspension")
	})
}

// An autoscaling RayCluster in a queue is refused with a clear message:
// every replica change would evict it. Outside a queue it is none of
// Muster's business.
func TestAutoscalingRayClusterInAQueueIsRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "8")
	auto := rayCluster("auto", ns, 2)
	auto.Spec.EnableInTreeAutoscaling = ptr.To(true)
	err := env.Client.Create(ctx, auto)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.enableInTreeAutoscaling"))
	g.Expect(err.Error()).To(ContainSubstring("cannot autoscale"))

	unqueued := MakeRayCluster("unqueued", ns).HeadRequest(gpu, "1").Obj()
	unqueued.Spec.EnableInTreeAutoscaling = ptr.To(true)
	g.Expect(env.Client.Create(ctx, unqueued)).To(Succeed())

	fixed := rayCluster("fixed", ns, 2)
	g.Expect(env.Client.Create(ctx, fixed)).To(Succeed())
	eventually(t, func(g Gomega) {
		got := getRayCluster(g, fixed)
		got.Spec.EnableInTreeAutoscaling = ptr.To(true)
		err := env.Client.Update(ctx, got)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "turning autoscaling on later is refused too: %v", err)
	})
}
