//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

// The ProvisioningRequest check with the real cluster autoscaler
// (OPERATORS=autoscaler hack/cluster.sh operators): one node group,
// `autoscaled`, of 0 to 4 kwok nodes of 8 GPUs, tainted
// muster.dev/autoscaled. The autoscaler holds a GPU pod's scale-up 30 s
// after its creation (its unschedulablePodWithGpuTimeBuffer), so each
// provisioning takes about that long.

const (
	nodeGroupLabel = "muster.dev/nodegroup"
	nodeGroup      = "autoscaled"
	// provisionTimeout covers the autoscaler's 30 s GPU buffer, a loop or
	// two, and a conflict it retries.
	provisionTimeout = 3 * time.Minute
)

// autoscaledQueue is a ClusterQueue on the autoscaled node group whose one
// admission check asks the autoscaler for the nodes with requests of the
// given class, retried limit times from a backoff of 1 s. The nodes the
// test made the autoscaler create are deleted when it ends, so every test
// starts from an empty pool.
func autoscaledQueue(t *testing.T, ns, class string, limit int32) string {
	t.Helper()
	emptyPool(t)
	t.Cleanup(func() { emptyPool(t) })
	flavor := "autoscaled-" + ns
	ac, cfg := MakeProvisioningCheck("prov-"+ns, class, limit, 1, gpu)
	cq := MakeClusterQueue("cq-" + ns).ResourceGroup(MakeFlavorQuotas(flavor).Resource("cpu", "256").Resource(gpu, "64").Obj()).
		AdmissionChecks(ac.Name).Obj()
	createAll(t, cfg, ac,
		MakeResourceFlavor(flavor).NodeLabel(nodeGroupLabel, nodeGroup).
			Toleration(corev1.Toleration{Key: "muster.dev/autoscaled", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}).Obj(),
		cq, MakeLocalQueue("main", ns).ClusterQueue(cq.Name).Obj())
	NewWithT(t).Eventually(func(g Gomega) {
		var got musterv1beta1.ClusterQueue
		g.Expect(c.Get(context.Background(), client.ObjectKey{Name: cq.Name}, &got)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, musterv1beta1.ClusterQueueActive)).To(BeTrue(),
			"ClusterQueue not active: %v", got.Status.Conditions)
	}).WithTimeout(timeout).Should(Succeed())
	return cq.Name
}

// poolNodes are the autoscaled group's nodes.
func poolNodes(g Gomega) []corev1.Node {
	var nodes corev1.NodeList
	g.Expect(c.List(context.Background(), &nodes, client.MatchingLabels{nodeGroupLabel: nodeGroup})).To(Succeed())
	return nodes.Items
}

// emptyPool deletes the autoscaled group's nodes and waits until they are
// gone (scale-down is off: nothing else removes them).
func emptyPool(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	NewWithT(t).Eventually(func(g Gomega) {
		for _, n := range poolNodes(g) {
			g.Expect(client.IgnoreNotFound(c.Delete(ctx, &n))).To(Succeed())
		}
		g.Expect(poolNodes(g)).To(BeEmpty())
	}).WithTimeout(timeout).Should(Succeed())
}

// gpuNodesJob is a Job of pods pods of 8 GPUs: each takes a whole node.
func gpuNodesJob(ns, name string, pods int32) *batchv1.Job {
	j := MakeJob(name, ns).Queue("main").Parallelism(pods).Request(gpu, "8").Request("cpu", "1").Obj()
	j.Spec.BackoffLimit = ptr.To[int32](0)
	return j
}

func requestsOf(g Gomega, ns string) []autoscaling.ProvisioningRequest {
	var prs autoscaling.ProvisioningRequestList
	g.Expect(c.List(context.Background(), &prs, client.InNamespace(ns))).To(Succeed())
	return prs.Items
}

func suspended(g Gomega, j *batchv1.Job) bool {
	var job batchv1.Job
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(j), &job)).To(Succeed())
	return ptr.Deref(job.Spec.Suspend, false)
}

func TestJobOnAnEmptyPoolIsAdmittedOnceItsNodesExistAndRunsThere(t *testing.T) {
	ns := namespace(t)
	autoscaledQueue(t, ns, autoscaling.ProvisioningClassBestEffortAtomicScaleUp, 3)
	j := gpuNodesJob(ns, "trainer", 2)
	createAll(t, j)
	start := time.Now()
	// Quota reserved, its placement delayed, the job suspended while the
	// autoscaler works.
	NewWithT(t).Eventually(func(g Gomega) {
		wl := workloadOf(g, j.Namespace, "Job", j.Name)
		g.Expect(workload.HoldsQuota(wl)).To(BeTrue())
		g.Expect(workload.IsAdmitted(wl)).To(BeFalse())
		g.Expect(wl.Status.Admission.PodSetAssignments[0].DelayedTopologyRequest).To(HaveValue(Equal(musterv1beta1.DelayedTopologyRequestPending)))
		g.Expect(requestsOf(g, ns)).To(HaveLen(1))
	}).WithTimeout(timeout).Should(Succeed())
	NewWithT(t).Expect(suspended(NewWithT(t), j)).To(BeTrue())

	var nodes []string
	NewWithT(t).Eventually(func(g Gomega) {
		bound, _, _, on := podsOf(g, ns, j.Name)
		g.Expect(bound).To(Equal(2))
		nodes = on
	}).WithTimeout(provisionTimeout).Should(Succeed())
	t.Logf("2 pods of 8 GPUs bound %s after submission, on %v", time.Since(start).Round(time.Second), nodes)
	// They run on the two nodes the autoscaler made for them, one each,
	// and the job was admitted only once those nodes existed.
	NewWithT(t).Expect(slices.Compact(slices.Sorted(slices.Values(nodes)))).To(HaveLen(2))
	wl := workloadOf(NewWithT(t), j.Namespace, "Job", j.Name)
	admitted := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadAdmitted).LastTransitionTime
	for _, name := range nodes {
		var n corev1.Node
		NewWithT(t).Expect(c.Get(context.Background(), types.NamespacedName{Name: name}, &n)).To(Succeed())
		NewWithT(t).Expect(n.Labels).To(HaveKeyWithValue(nodeGroupLabel, nodeGroup))
		NewWithT(t).Expect(n.CreationTimestamp.Time).NotTo(BeTemporally(">", admitted.Time), "node %s created after the job was admitted", name)
	}
	psa := wl.Status.Admission.PodSetAssignments[0]
	NewWithT(t).Expect(psa.DelayedTopologyRequest).To(HaveValue(Equal(musterv1beta1.DelayedTopologyRequestReady)))
	NewWithT(t).Expect(psa.TopologyAssignment).NotTo(BeNil())
}

func TestOverThePoolsMaximumOneRunsTheOtherWaitsWithTheAutoscalersReason(t *testing.T) {
	ns := namespace(t)
	autoscaledQueue(t, ns, autoscaling.ProvisioningClassBestEffortAtomicScaleUp, 3)
	// 3 nodes each; the group has at most 4.
	a, b := gpuNodesJob(ns, "first", 3), gpuNodesJob(ns, "second", 3)
	createAll(t, a, b)
	var running, waiting *batchv1.Job
	NewWithT(t).Eventually(func(g Gomega) {
		boundA, _, _, _ := podsOf(g, ns, a.Name)
		boundB, _, _, _ := podsOf(g, ns, b.Name)
		switch {
		case boundA == 3:
			running, waiting = a, b
		case boundB == 3:
			running, waiting = b, a
		}
		g.Expect(running).NotTo(BeNil(), "neither job runs")
	}).WithTimeout(provisionTimeout).Should(Succeed())
	t.Logf("%s runs; %s waits", running.Name, waiting.Name)
	NewWithT(t).Eventually(func(g Gomega) {
		wl := workloadOf(g, waiting.Namespace, "Job", waiting.Name)
		g.Expect(workload.HoldsQuota(wl)).To(BeTrue())
		g.Expect(workload.IsAdmitted(wl)).To(BeFalse())
		st := wl.Status.AdmissionChecks[0]
		g.Expect(st.State).To(Equal(musterv1beta1.CheckStatePending))
		g.Expect(st.Message).To(ContainSubstring("Capacity is not found"))
	}).WithTimeout(provisionTimeout).Should(Succeed())
	NewWithT(t).Consistently(func(g Gomega) {
		g.Expect(suspended(g, waiting)).To(BeTrue())
		g.Expect(len(poolNodes(g))).To(BeNumerically("<=", 4))
	}).WithTimeout(10 * time.Second).Should(Succeed())
}

// No autoscaler here serves this class, so the test plays the autoscaler
// failing: the real one marks a request Failed only for a missing
// PodTemplate or after a week of finding no capacity.
const unservedClass = "queued-provisioning.gke.io"

func TestFailedProvisioningRetriesWithBackoffThenRejectsWithTheAutoscalersMessage(t *testing.T) {
	ns := namespace(t)
	autoscaledQueue(t, ns, unservedClass, 1)
	j := gpuNodesJob(ns, "unlucky", 1)
	createAll(t, j)
	fail := func(attempt string) {
		NewWithT(t).Eventually(func(g Gomega) {
			var pr autoscaling.ProvisioningRequest
			g.Expect(c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: workloadOf(g, j.Namespace, "Job", j.Name).Name + "-prov-" + ns + "-" + attempt}, &pr)).To(Succeed())
			meta.SetStatusCondition(&pr.Status.Conditions, metav1.Condition{Type: autoscaling.Failed, Status: metav1.ConditionTrue,
				Reason: "OutOfStock", Message: "the zone has no a100 left"})
			g.Expect(c.Status().Update(context.Background(), &pr)).To(Succeed())
		}).WithTimeout(timeout).Should(Succeed())
	}
	fail("1")
	NewWithT(t).Eventually(func(g Gomega) {
		wl := workloadOf(g, j.Namespace, "Job", j.Name)
		g.Expect(workload.CheckRetries(&wl.Status.AdmissionChecks[0])).To(Equal(int32(1)))
		cond := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadRequeued)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(musterv1beta1.ReasonAdmissionCheck))
	}).WithTimeout(timeout).Should(Succeed())
	fail("2")
	NewWithT(t).Eventually(func(g Gomega) {
		wl := workloadOf(g, j.Namespace, "Job", j.Name)
		g.Expect(workload.IsActive(wl)).To(BeFalse())
		cond := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(musterv1beta1.ReasonAdmissionCheckRejected))
		g.Expect(cond.Message).To(ContainSubstring("the zone has no a100 left"))
	}).WithTimeout(timeout).Should(Succeed())
	NewWithT(t).Expect(suspended(NewWithT(t), j)).To(BeTrue())
}

func TestMusterRestartMidProvisioningMakesNoSecondRequest(t *testing.T) {
	ns := namespace(t)
	autoscaledQueue(t, ns, autoscaling.ProvisioningClassBestEffortAtomicScaleUp, 3)
	j := gpuNodesJob(ns, "patient", 1)
	createAll(t, j)
	var first types.UID
	NewWithT(t).Eventually(func(g Gomega) {
		prs := requestsOf(g, ns)
		g.Expect(prs).To(HaveLen(1))
		first = prs[0].UID
	}).WithTimeout(timeout).Should(Succeed())
	restartMuster(t)
	NewWithT(t).Eventually(func(g Gomega) {
		bound, _, _, _ := podsOf(g, ns, j.Name)
		g.Expect(bound).To(Equal(1))
	}).WithTimeout(provisionTimeout).Should(Succeed())
	prs := requestsOf(NewWithT(t), ns)
	NewWithT(t).Expect(prs).To(HaveLen(1))
	NewWithT(t).Expect(prs[0].UID).To(Equal(first), "the restarted manager made a second request")
}
