package jobs

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/scheduling"
	"github.com/musterhq/muster/test/framework"
)

// TestQueueAndFlavorInUseStayUntilTheirWorkloadsFinish (P9): deleting a
// ClusterQueue or ResourceFlavor under an admitted workload leaves it
// Terminating, admitting nothing new, until the workload finishes.
func TestQueueAndFlavorInUseStayUntilTheirWorkloadsFinish(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "8")
	running := q.gpuJob("running", 1, "4")
	g.Expect(env.Client.Create(ctx, running)).To(Succeed())
	expectRunning(t, running)

	cq := &musterv1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: q.cq}}
	rf := &musterv1beta1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: q.flavor}}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cq), cq)).To(Succeed())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(rf), rf)).To(Succeed())
		g.Expect(cq.Finalizers).To(ContainElement(scheduling.InUseFinalizer))
		g.Expect(rf.Finalizers).To(ContainElement(scheduling.InUseFinalizer))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, cq)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, rf)).To(Succeed())

	expectActive(t, q.cq, metav1.ConditionFalse, "Terminating")
	waiting := q.gpuJob("waiting", 1, "1")
	g.Expect(env.Client.Create(ctx, waiting)).To(Succeed())
	expectPending(t, waiting, "is inactive")
	framework.HoldsFor(t, func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cq), cq)).To(Succeed(), "the queue stays while its workload runs")
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(rf), rf)).To(Succeed(), "so does the flavor")
	})

	complete(t, running)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cq), cq)) &&
			apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(rf), rf))
	}, framework.Timeout, framework.Interval).Should(BeTrue(), "both go once the workload finished")
}
