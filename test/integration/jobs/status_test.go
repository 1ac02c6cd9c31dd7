package jobs

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

func TestClusterQueueInactiveUntilItsFlavorExists(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "4")
	cq := MakeClusterQueue("cq-late-" + q.ns).ResourceGroup(MakeFlavorQuotas("late-"+q.ns).Resource(gpu, "4").Obj()).Obj()
	lq := MakeLocalQueue("late", q.ns).ClusterQueue(cq.Name).Obj()
	g.Expect(env.Client.Create(ctx, cq)).To(Succeed())
	g.Expect(env.Client.Create(ctx, lq)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, cq) })

	expectActive(t, cq.Name, metav1.ConditionFalse, musterv1beta1.ReasonFlavorNotFound)
	j := MakeJob("waits-for-flavor", q.ns).Queue("late").Request(gpu, "1").Obj()
	g.Expect(env.Client.Create(ctx, j)).To(Succeed())
	expectPending(t, j, "ClusterQueue "+cq.Name+" is inactive: ResourceFlavor late-"+q.ns+" not found")

	rf := MakeResourceFlavor("late-"+q.ns).NodeLabel("gpu", "a100").QuotaOnly().Obj()
	g.Expect(env.Client.Create(ctx, rf)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, rf) })
	expectActive(t, cq.Name, metav1.ConditionTrue, musterv1beta1.ReasonReady)
	expectRunning(t, j)
}

func TestQueueStatusShowsCountsAndUsage(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "8")
	running, pending := q.gpuJob("uses-six", 2, "3"), q.gpuJob("needs-four", 1, "4")
	g.Expect(env.Client.Create(ctx, running)).To(Succeed())
	expectRunning(t, running)
	g.Expect(env.Client.Create(ctx, pending)).To(Succeed())
	expectPending(t, pending, "4 requested, 2 available")

	g.Eventually(func(g Gomega) {
		var cq musterv1beta1.ClusterQueue
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: q.cq}, &cq)).To(Succeed())
		g.Expect(cq.Status.PendingWorkloads).To(BeEquivalentTo(1))
		g.Expect(cq.Status.AdmittedWorkloads).To(BeEquivalentTo(1))
		g.Expect(cq.Status.FlavorsReservation).To(HaveLen(1))
		g.Expect(cq.Status.FlavorsReservation[0].Resources[0].Total.String()).To(Equal("6"))

		var lq musterv1beta1.LocalQueue
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: q.ns, Name: q.lq}, &lq)).To(Succeed())
		g.Expect(lq.Status.PendingWorkloads).To(BeEquivalentTo(1))
		g.Expect(lq.Status.AdmittedWorkloads).To(BeEquivalentTo(1))
		g.Expect(lq.Status.FlavorsUsage[0].Resources[0].Total.String()).To(Equal("6"))
		g.Expect(meta.IsStatusConditionTrue(lq.Status.Conditions, musterv1beta1.LocalQueueActive)).To(BeTrue())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestMissingLocalQueueIsReported(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	q := setupQueues(t, "4")
	j := MakeJob("no-queue", q.ns).Queue("does-not-exist").Request(gpu, "1").Obj()
	g.Expect(env.Client.Create(context.Background(), j)).To(Succeed())
	expectPending(t, j, "LocalQueue does-not-exist doesn't exist")

	lq := MakeLocalQueue("does-not-exist", q.ns).ClusterQueue(q.cq).Obj()
	g.Expect(env.Client.Create(context.Background(), lq)).To(Succeed())
	expectRunning(t, j)
}

func expectActive(t *testing.T, name string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		var cq musterv1beta1.ClusterQueue
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &cq)).To(Succeed())
		c := meta.FindStatusCondition(cq.Status.Conditions, musterv1beta1.ClusterQueueActive)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(status))
		g.Expect(c.Reason).To(Equal(reason))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}
