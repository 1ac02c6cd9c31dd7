package admissionchecks

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

// A third-party check: the test writes what its controller would (the
// Active condition, the workload's check state with podSetUpdates).
const approval = "example.com/approval"

func TestQueueIsInactiveUntilItsCheckExistsAndIsActive(t *testing.T) {
	env.StartManager(t)
	q := newCheckedQueue(t, "8", false, "approve-missing")
	eventually(t, func(g Gomega) {
		c := queueActive(g, q.cq)
		g.Expect(c.Reason).To(Equal(musterv1beta1.ReasonAdmissionCheckNotFound))
		g.Expect(c.Message).To(ContainSubstring("AdmissionCheck approve-missing not found"))
	})
	j := q.job(t, "waits", 1, "1")
	eventually(t, func(g Gomega) { env.WorkloadOfJob(g, j) })
	createCheck(t, MakeAdmissionCheck("approve-missing", approval))
	eventually(t, func(g Gomega) {
		g.Expect(queueActive(g, q.cq).Reason).To(Equal(musterv1beta1.ReasonAdmissionCheckInactive))
	})
	consistently(t, func(g Gomega) {
		g.Expect(workload.HoldsQuota(env.WorkloadOfJob(g, j))).To(BeFalse(), "reserved in a queue whose check is not Active")
	})
	setActive(t, "approve-missing", true)
	eventually(t, func(g Gomega) { g.Expect(queueActive(g, q.cq).Status).To(Equal(metav1.ConditionTrue)) })
	expectWaitingForChecks(t, j)
}

func TestJobRunsOnlyOnceEveryCheckIsReadyWithWhatTheChecksAdd(t *testing.T) {
	env.StartManager(t)
	q := newCheckedQueue(t, "8", false)
	a, b := "approve-"+q.ns, "budget-"+q.ns
	activeChecks(t, q.cq, a, b)
	j := q.job(t, "trainer", 2, "2")
	expectWaitingForChecks(t, j)

	answer(t, j, musterv1beta1.AdmissionCheckState{Name: musterv1beta1.AdmissionCheckReference(a), State: musterv1beta1.CheckStateReady,
		PodSetUpdates: []musterv1beta1.PodSetUpdate{{Name: "main", Labels: map[string]string{"approved-by": "alice"},
			NodeSelector: map[string]string{"zone": "z1"}, Tolerations: []corev1.Toleration{{Key: "approved", Operator: corev1.TolerationOpExists}}}}})
	consistently(t, func(g Gomega) {
		g.Expect(*env.GetJob(g, j).Spec.Suspend).To(BeTrue(), "started with one of two checks Ready")
	})
	answer(t, j, musterv1beta1.AdmissionCheckState{Name: musterv1beta1.AdmissionCheckReference(b), State: musterv1beta1.CheckStateReady})
	eventually(t, func(g Gomega) {
		job := env.GetJob(g, j)
		g.Expect(*job.Spec.Suspend).To(BeFalse())
		g.Expect(job.Spec.Template.Labels).To(HaveKeyWithValue("approved-by", "alice"))
		g.Expect(job.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("zone", "z1"))
		g.Expect(job.Spec.Template.Spec.Tolerations).To(ContainElement(HaveField("Key", "approved")))
		g.Expect(workload.IsAdmitted(env.WorkloadOfJob(g, j))).To(BeTrue())
	})
	eventually(t, func(g Gomega) {
		g.Expect(env.EventReasons(g, q.ns, j.Name)).To(ContainElement("AdmissionCheckReady"))
	})
}

func TestRetryReleasesTheQuotaAndQueuesAgainAfterTheBackoff(t *testing.T) {
	env.StartManager(t)
	q := newCheckedQueue(t, "8", false)
	a := "approve-" + q.ns
	activeChecks(t, q.cq, a)
	j := q.job(t, "retried", 1, "8")
	expectWaitingForChecks(t, j)
	other := q.job(t, "behind", 1, "8")

	answer(t, j, musterv1beta1.AdmissionCheckState{Name: musterv1beta1.AdmissionCheckReference(a), State: musterv1beta1.CheckStateRetry,
		Message: "approver busy", RequeueAfterSeconds: ptr.To[int32](3)})
	// The quota goes to the workload behind it while it backs off.
	expectWaitingForChecks(t, other)
	eventually(t, func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(workload.HoldsQuota(wl)).To(BeFalse())
		g.Expect(workload.CheckRetries(workload.FindCheck(wl, a))).To(Equal(int32(1)))
		g.Expect(workload.RequeueCount(wl)).To(BeZero(), "a check's retries are not waitForPodsReady's requeues")
		g.Expect(checkState(g, wl, a)).To(Equal(musterv1beta1.CheckStatePending))
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(musterv1beta1.ReasonAdmissionCheck))
		g.Expect(c.Message).To(ContainSubstring("approver busy"))
	})
	g := NewWithT(t)
	g.Expect(*env.GetJob(g, j).Spec.Suspend).To(BeTrue())
}

func TestRejectedDeactivatesWithTheChecksMessage(t *testing.T) {
	env.StartManager(t)
	q := newCheckedQueue(t, "8", false)
	a := "approve-" + q.ns
	activeChecks(t, q.cq, a)
	j := q.job(t, "rejected", 1, "1")
	expectWaitingForChecks(t, j)
	answer(t, j, musterv1beta1.AdmissionCheckState{Name: musterv1beta1.AdmissionCheckReference(a), State: musterv1beta1.CheckStateRejected, Message: "over the team's budget"})
	eventually(t, func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(workload.IsActive(wl)).To(BeFalse())
		g.Expect(workload.HoldsQuota(wl)).To(BeFalse())
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(musterv1beta1.ReasonAdmissionCheckRejected))
		g.Expect(c.Message).To(ContainSubstring("over the team's budget"))
	})
	consistently(t, func(g Gomega) {
		g.Expect(workload.HoldsQuota(env.WorkloadOfJob(g, j))).To(BeFalse(), "a rejected workload was queued again")
	})
}

func TestChecksApplyOnlyToTheirFlavors(t *testing.T) {
	env.StartManager(t)
	q := newCheckedQueue(t, "8", false)
	a := "spot-only-" + q.ns
	activeChecks(t, "", a)
	eventually(t, func(g Gomega) {
		var cq musterv1beta1.ClusterQueue
		g.Expect(env.Client.Get(context.Background(), keyOf(q.cq), &cq)).To(Succeed())
		cq.Spec.AdmissionChecksStrategy = &musterv1beta1.AdmissionChecksStrategy{AdmissionChecks: []musterv1beta1.AdmissionCheckStrategyRule{
			{Name: musterv1beta1.AdmissionCheckReference(a), OnFlavors: []musterv1beta1.ResourceFlavorReference{"spot"}}}}
		g.Expect(env.Client.Update(context.Background(), &cq)).To(Succeed())
	})
	j := q.job(t, "on-demand", 1, "1")
	eventually(t, func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(workload.IsAdmitted(wl)).To(BeTrue(), "a check on another flavor held it")
		g.Expect(wl.Status.AdmissionChecks).To(BeEmpty())
	})
}

func TestCheckTakenOffTheQueueNoLongerHoldsItsWorkloads(t *testing.T) {
	env.StartManager(t)
	q := newCheckedQueue(t, "8", false)
	a, b := "approve-"+q.ns, "budget-"+q.ns
	activeChecks(t, q.cq, a, b)
	j := q.job(t, "held", 1, "1")
	expectWaitingForChecks(t, j)
	answer(t, j, musterv1beta1.AdmissionCheckState{Name: musterv1beta1.AdmissionCheckReference(a), State: musterv1beta1.CheckStateReady})
	setChecks(t, q.cq, a)
	eventually(t, func(g Gomega) {
		g.Expect(*env.GetJob(g, j).Spec.Suspend).To(BeFalse(), "still held by a check the queue no longer has")
		g.Expect(env.WorkloadOfJob(g, j).Status.AdmissionChecks).To(HaveLen(1))
	})
	k := q.job(t, "held-by-none", 1, "1")
	expectWaitingForChecks(t, k)
	setChecks(t, q.cq)
	eventually(t, func(g Gomega) { g.Expect(*env.GetJob(g, k).Spec.Suspend).To(BeFalse()) })
}
