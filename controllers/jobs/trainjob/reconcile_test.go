package trainjob

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/test/builder"
)

// A TrainJob created while the webhook was down, naming a runtime that
// does not exist yet, is suspended and waits with a warning on it, tried
// again shortly; once the runtime exists it gets its Workload.
func TestTheReconcilerWaitsForTheRuntime(t *testing.T) {
	g := NewWithT(t)
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, musterv1beta1.AddToScheme, addToScheme} {
		g.Expect(add(s)).To(Succeed())
	}
	tj := builder.MakeTrainJob("llm", "ns", "torch").Queue("main").NumNodes(2).ResourcesPerNode(gpu, "1").Obj()
	c := fake.NewClientBuilder().WithScheme(s).
		WithObjects(tj, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}).
		WithIndex(&musterv1beta1.Workload{}, jobframework.OwnerIndex, jobframework.OwnerIndexValues).Build()
	rec := events.NewFakeRecorder(10)
	r := jobframework.NewReconcilerWith(c, rec, Kind, jobframework.Options{Clock: clock.RealClock{}, AcceptKueueQueueLabel: true})
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tj)}
	ctx := context.Background()

	reconcileAll := func() ctrl.Result {
		var res ctrl.Result
		for range 3 {
			var err error
			res, err = r.Reconcile(ctx, req)
			g.Expect(err).NotTo(HaveOccurred())
		}
		return res
	}
	g.Expect(reconcileAll().RequeueAfter).To(Equal(15 * time.Second))
	got := Kind.New()
	g.Expect(c.Get(ctx, req.NamespacedName, got)).To(Succeed())
	g.Expect(Kind.Adapt(got).IsSuspended()).To(BeTrue(), "suspended: it ran without quota")
	g.Expect(rec.Events).To(Receive(ContainSubstring("Suspended")))
	g.Expect(rec.Events).To(Receive(ContainSubstring(`ClusterTrainingRuntime "torch" does not exist`)))
	var wls musterv1beta1.WorkloadList
	g.Expect(c.List(ctx, &wls)).To(Succeed())
	g.Expect(wls.Items).To(BeEmpty())

	g.Expect(c.Create(ctx, builder.MakeClusterTrainingRuntime("torch").Trainer("node", "cpu", "1").Obj())).To(Succeed())
	reconcileAll()
	g.Expect(c.List(ctx, &wls)).To(Succeed())
	g.Expect(wls.Items).To(HaveLen(1))
	g.Expect(wls.Items[0].Spec.PodSets).To(ConsistOf(HaveField("Count", int32(2))))
}
