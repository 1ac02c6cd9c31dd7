package admissionchecks

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

// The test plays the cluster autoscaler: it reads the ProvisioningRequests
// Muster creates and writes their conditions.

const atomic = autoscaling.ProvisioningClassBestEffortAtomicScaleUp

// provisionedQueue is a queue whose one check is a ProvisioningRequest
// check of the given retries (backoff base 1 s), Active.
func provisionedQueue(t *testing.T, nodeFit bool, limit int32) (checkedQueue, string) {
	t.Helper()
	q := newCheckedQueue(t, "32", nodeFit)
	check := "prov-" + q.ns
	ac, cfg := MakeProvisioningCheck(check, atomic, limit, 1, gpu)
	createCheck(t, cfg, ac)
	expectCheckActive(t, check)
	setChecks(t, q.cq, check)
	return q, check
}

// requestsOf lists the workload's ProvisioningRequests.
func requestsOf(g Gomega, j *batchv1.Job) []autoscaling.ProvisioningRequest {
	wl := env.WorkloadOfJob(g, j)
	var prs autoscaling.ProvisioningRequestList
	g.Expect(env.Client.List(context.Background(), &prs, client.InNamespace(j.Namespace))).To(Succeed())
	var out []autoscaling.ProvisioningRequest
	for _, pr := range prs.Items {
		if metav1.IsControlledBy(&pr, wl) && pr.DeletionTimestamp.IsZero() {
			out = append(out, pr)
		}
	}
	return out
}

// theRequest waits for the workload's one request and returns it.
func theRequest(t *testing.T, j *batchv1.Job, name string) *autoscaling.ProvisioningRequest {
	t.Helper()
	var pr *autoscaling.ProvisioningRequest
	eventually(t, func(g Gomega) {
		prs := requestsOf(g, j)
		g.Expect(prs).To(HaveLen(1))
		g.Expect(prs[0].Name).To(HaveSuffix(name))
		pr = &prs[0]
	})
	return pr
}

// setCondition writes a ProvisioningRequest condition, as the autoscaler.
func setCondition(t *testing.T, pr *autoscaling.ProvisioningRequest, typ, reason, msg string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		var cur autoscaling.ProvisioningRequest
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(pr), &cur)).To(Succeed())
		meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: msg})
		g.Expect(env.Client.Status().Update(context.Background(), &cur)).To(Succeed())
	})
}

func TestProvisionedRequestStartsTheJobConsumingIt(t *testing.T) {
	env.StartManager(t)
	q, check := provisionedQueue(t, false, 3)
	j := q.job(t, "trainer", 2, "8")
	expectWaitingForChecks(t, j)
	pr := theRequest(t, j, check+"-1")
	g := NewWithT(t)
	g.Expect(pr.Spec.ProvisioningClassName).To(Equal(atomic))
	g.Expect(pr.Spec.PodSets).To(HaveLen(1))
	g.Expect(pr.Spec.PodSets[0].Count).To(Equal(int32(2)))
	var pt corev1.PodTemplate
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: q.ns, Name: pr.Spec.PodSets[0].PodTemplateRef.Name}, &pt)).To(Succeed())
	g.Expect(pt.Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", q.ns), "the template does not name the flavor's nodes")
	g.Expect(pt.Template.Spec.Containers[0].Resources.Requests).To(HaveKey(gpu))

	setCondition(t, pr, autoscaling.Provisioned, "Provisioned", "2 nodes are up")
	eventually(t, func(g Gomega) {
		job := env.GetJob(g, j)
		g.Expect(*job.Spec.Suspend).To(BeFalse())
		g.Expect(job.Spec.Template.Annotations).To(HaveKeyWithValue(autoscaling.ProvisioningRequestPodAnnotationKey, pr.Name))
		g.Expect(job.Spec.Template.Annotations).To(HaveKeyWithValue(autoscaling.ProvisioningClassPodAnnotationKey, atomic))
	})
}

func TestFailedRequestRetriesWithANewAttemptThenRejects(t *testing.T) {
	env.StartManager(t)
	q, check := provisionedQueue(t, false, 1)
	j := q.job(t, "unlucky", 2, "8")
	first := theRequest(t, j, check+"-1")
	setCondition(t, first, autoscaling.Failed, "NoCapacity", "the node group is at its maximum size")
	eventually(t, func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadRequeued)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(musterv1beta1.ReasonAdmissionCheck))
		g.Expect(c.Message).To(ContainSubstring("the node group is at its maximum size"))
	})
	// After its 1 s backoff it reserves again and asks again, anew.
	second := theRequest(t, j, check+"-2")
	setCondition(t, second, autoscaling.Failed, "NoCapacity", "the node group is at its maximum size")
	eventually(t, func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(workload.IsActive(wl)).To(BeFalse())
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(musterv1beta1.ReasonAdmissionCheckRejected))
		g.Expect(c.Message).To(ContainSubstring("the node group is at its maximum size"))
		g.Expect(c.Message).To(ContainSubstring("no retry left"))
	})
	consistently(t, func(g Gomega) {
		g.Expect(*env.GetJob(g, j).Spec.Suspend).To(BeTrue())
		g.Expect(requestsOf(g, j)).To(BeEmpty(), "a deactivated workload keeps a request")
	})
}

func TestRestartMidProvisioningCreatesNoSecondRequest(t *testing.T) {
	m := env.StartManager(t)
	q, check := provisionedQueue(t, false, 3)
	j := q.job(t, "patient", 2, "8")
	pr := theRequest(t, j, check+"-1")
	m = env.Restart(t, m)
	consistently(t, func(g Gomega) {
		prs := requestsOf(g, j)
		g.Expect(prs).To(HaveLen(1))
		g.Expect(prs[0].UID).To(Equal(pr.UID))
		g.Expect(*env.GetJob(g, j).Spec.Suspend).To(BeTrue())
	})
	setCondition(t, pr, autoscaling.Provisioned, "Provisioned", "up")
	eventually(t, func(g Gomega) { g.Expect(*env.GetJob(g, j).Spec.Suspend).To(BeFalse()) })
	m.Stop(t)
}

func TestPlacementWaitsForTheProvisionedNodes(t *testing.T) {
	env.StartManager(t)
	q, check := provisionedQueue(t, true, 3)
	j := q.job(t, "placed-late", 2, "8")
	// Reserved on a pool with no node: its placement waits.
	eventually(t, func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(workload.HoldsQuota(wl)).To(BeTrue())
		psa := wl.Status.Admission.PodSetAssignments[0]
		g.Expect(psa.TopologyAssignment).To(BeNil())
		g.Expect(psa.DelayedTopologyRequest).To(HaveValue(Equal(musterv1beta1.DelayedTopologyRequestPending)))
	})
	pr := theRequest(t, j, check+"-1")
	setCondition(t, pr, autoscaling.Provisioned, "Provisioned", "2 nodes are up")
	consistently(t, func(g Gomega) {
		g.Expect(*env.GetJob(g, j).Spec.Suspend).To(BeTrue(), "started before its nodes exist")
	})
	env.CreateNode(t, gpuNode("n1-"+q.ns, q.ns))
	env.CreateNode(t, gpuNode("n2-"+q.ns, q.ns))
	eventually(t, func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(workload.IsAdmitted(wl)).To(BeTrue())
		psa := wl.Status.Admission.PodSetAssignments[0]
		g.Expect(psa.DelayedTopologyRequest).To(HaveValue(Equal(musterv1beta1.DelayedTopologyRequestReady)))
		g.Expect(psa.TopologyAssignment).NotTo(BeNil())
		g.Expect(psa.TopologyAssignment.Domains[0].Leaves).To(ConsistOf("n1-"+q.ns, "n2-"+q.ns))
		g.Expect(*env.GetJob(g, j).Spec.Suspend).To(BeFalse())
	})
}

func TestCheckIsActiveOnlyWithItsConfig(t *testing.T) {
	env.StartManager(t)
	ns := env.NewNamespace(t, "checks", nil)
	ac, cfg := MakeProvisioningCheck("prov-"+ns, atomic, 3, 1)
	createCheck(t, ac)
	eventually(t, func(g Gomega) {
		var got musterv1beta1.AdmissionCheck
		g.Expect(env.Client.Get(context.Background(), keyOf(ac.Name), &got)).To(Succeed())
		c := meta.FindStatusCondition(got.Status.Conditions, musterv1beta1.AdmissionCheckActive)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring("ProvisioningRequestConfig " + cfg.Name + " not found"))
	})
	createCheck(t, cfg)
	expectCheckActive(t, ac.Name)
}

func TestJobWithoutManagedResourcesNeedsNoRequest(t *testing.T) {
	env.StartManager(t)
	q, _ := provisionedQueue(t, false, 3)
	j := MakeJob("cpu-only", q.ns).Queue("main").Request(corev1.ResourceCPU, "1").Obj()
	// The queue covers GPUs only: give it CPU too.
	eventually(t, func(g Gomega) {
		var cq musterv1beta1.ClusterQueue
		g.Expect(env.Client.Get(context.Background(), keyOf(q.cq), &cq)).To(Succeed())
		cq.Spec.ResourceGroups = []musterv1beta1.ResourceGroup{MakeResourceGroup(MakeFlavorQuotas(q.flavor).Resource(gpu, "32").Resource(corev1.ResourceCPU, "10").Obj())}
		g.Expect(env.Client.Update(context.Background(), &cq)).To(Succeed())
	})
	env.CreateAll(t, j)
	eventually(t, func(g Gomega) {
		g.Expect(*env.GetJob(g, j).Spec.Suspend).To(BeFalse())
		g.Expect(requestsOf(g, j)).To(BeEmpty())
	})
}

func TestTwoProvisioningChecksKeepTheirOwnRequests(t *testing.T) {
	env.StartManager(t)
	q, first := provisionedQueue(t, false, 3)
	second := "prov2-" + q.ns
	ac, cfg := MakeProvisioningCheck(second, autoscaling.ProvisioningClassCheckCapacity, 3, 1, gpu)
	createCheck(t, cfg, ac)
	expectCheckActive(t, second)
	setChecks(t, q.cq, first, second)
	j := q.job(t, "twice", 1, "8")
	var prs []autoscaling.ProvisioningRequest
	eventually(t, func(g Gomega) {
		prs = requestsOf(g, j)
		g.Expect(prs).To(HaveLen(2))
	})
	consistently(t, func(g Gomega) {
		g.Expect(requestsOf(g, j)).To(HaveLen(2), "one check's request deleted the other's")
	})
	for i := range prs {
		setCondition(t, &prs[i], autoscaling.Provisioned, "Provisioned", "up")
	}
	eventually(t, func(g Gomega) { g.Expect(*env.GetJob(g, j).Spec.Suspend).To(BeFalse()) })
}
