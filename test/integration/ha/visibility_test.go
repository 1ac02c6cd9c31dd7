package ha

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// pendingIn asks the API server (its aggregator) for a LocalQueue's
// pending workloads.
func pendingIn(g Gomega, ns, lq string) *visibilityv1beta1.PendingWorkloadsSummary {
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := cs.CoreV1().RESTClient().Get().
		AbsPath("/apis/visibility.muster.dev/v1beta1/namespaces/" + ns + "/localqueues/" + lq + "/pendingworkloads").DoRaw(context.Background())
	g.Expect(err).NotTo(HaveOccurred(), "%s", raw)
	var out visibilityv1beta1.PendingWorkloadsSummary
	g.Expect(json.Unmarshal(raw, &out)).To(Succeed())
	return &out
}

// explanationAt asks the API server for a workload's explanation.
func explanationAt(g Gomega, ns, name string) *visibilityv1beta1.WorkloadExplanation {
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := cs.CoreV1().RESTClient().Get().
		AbsPath("/apis/visibility.muster.dev/v1beta1/namespaces/" + ns + "/workloads/" + name + "/explanation").DoRaw(context.Background())
	g.Expect(err).NotTo(HaveOccurred(), "%s", raw)
	var out visibilityv1beta1.WorkloadExplanation
	g.Expect(json.Unmarshal(raw, &out)).To(Succeed())
	return &out
}

func TestAFollowerAnswersTheVisibilityAPI(t *testing.T) {
	// The chart's default: two replicas behind one Service. The APIService
	// is pointed at the follower: it must answer with the leader's
	// positions and reasons, not 503. (That its controllers write nothing
	// is controllers/scheduling's TestFollowerWritesNothing.)
	g := NewWithT(t)
	ctx := context.Background()
	leader, err := env.StartManagerWithVisibility(ctx, electing)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = leader.StopE() })
	g.Eventually(func() bool { return isLeader(leader) }, framework.Timeout, framework.Interval).Should(BeTrue())
	follower, err := env.StartManagerWithVisibility(ctx, electing) // the APIService now reaches the follower
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = follower.StopE() })
	g.Expect(isLeader(follower)).To(BeFalse())

	ns := env.NewNamespace(t, "vis", nil)
	env.CreateAll(t,
		MakeResourceFlavor("f-"+ns).QuotaOnly().Obj(),
		MakeClusterQueue("cq-"+ns).ResourceGroup(MakeFlavorQuotas("f-"+ns).Resource(corev1.ResourceCPU, "2").Obj()).Obj(),
		MakeLocalQueue("main", ns).ClusterQueue("cq-"+ns).Obj())
	for _, name := range []string{"first", "second", "third"} {
		// Created in name order: within one second of creation time the
		// queue orders by name, so the order is defined either way.
		env.CreateAll(t, MakeWorkload(name, ns).Queue("main").Request(corev1.ResourceCPU, "2").Obj())
	}
	g.Eventually(func(g Gomega) {
		got := pendingIn(g, ns, "main")
		g.Expect(got.Items).To(HaveLen(2))
		g.Expect([]string{got.Items[0].Name, got.Items[1].Name}).To(Equal([]string{"second", "third"}))
		g.Expect(got.Items[0].PositionInLocalQueue).To(BeEquivalentTo(0))
		g.Expect(got.Items[0].Reason).To(ContainSubstring("cpu"), "the follower reads the reason from the status")
		// The follower runs the search on its own cache, which its
		// controllers keep as the leader's.
		x := explanationAt(g, ns, "third")
		g.Expect(x.Fit).To(Equal(visibilityv1beta1.FitNone))
		g.Expect(x.Shortages).To(ContainElement(HaveField("Message", ContainSubstring("2 requested, 0 available"))))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	// The leader goes; the follower, elected, admits the next and its
	// status writes resume (the pending reason of the last is its own).
	g.Expect(leader.StopE()).To(Succeed())
	g.Eventually(func() bool { return isLeader(follower) }, 10*time.Second, 50*time.Millisecond).Should(BeTrue())
	var first musterv1beta1.Workload
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "first"}, &first)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, &first)).To(Succeed())
	g.Eventually(func(g Gomega) {
		var second musterv1beta1.Workload
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "second"}, &second)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(second.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)).To(BeTrue())
		got := pendingIn(g, ns, "main")
		g.Expect(got.Items).To(HaveLen(1))
		g.Expect(got.Items[0].Name).To(Equal("third"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}
