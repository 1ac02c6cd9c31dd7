package scheduling

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// TestMinRuntimeBeforePreemption: a ClusterQueue with
// preemption.minRuntimeSeconds of 6; an urgent Job does not preempt the low-priority one that holds
// the GPUs until it has run that long, and says so while it waits; then
// it does.
func TestMinRuntimeBeforePreemption(t *testing.T) {
	env.StartManager(t)
	w := newWorld(t)
	high := MakeWorkloadPriorityClass("high-"+w.ns, 100)
	env.CreateAll(t, high)
	w.queue(t, "a", "4", func(cq *musterv1beta1.ClusterQueue) {
		cq.Spec.Cohort = ""
		cq.Spec.Preemption = &musterv1beta1.ClusterQueuePreemption{
			WithinClusterQueue: musterv1beta1.PreemptionPolicyLowerPriority,
			MinRuntimeSeconds:  ptr.To[int32](6),
		}
	})
	low := w.job("low", "a", "4")
	create(t, low)
	running(t, low)
	g := NewWithT(t)
	var admittedAt time.Time
	g.Eventually(func(g Gomega) {
		c := meta.FindStatusCondition(env.WorkloadOfJob(g, low).Status.Conditions, musterv1beta1.WorkloadQuotaReserved)
		g.Expect(c).NotTo(BeNil())
		admittedAt = c.LastTransitionTime.Time
	}, framework.Timeout, framework.Interval).Should(Succeed())

	urgent := w.job("urgent", "a", "4", high.Name)
	create(t, urgent)
	env.ExpectJobPending(t, urgent, "have not run their minimum runtime")
	g.Expect(framework.IsSuspended(env.GetJob(g, low))).To(BeFalse(), "not preempted within its minimum runtime")
	expectPreempted(t, low, "InClusterQueue")
	preempted := meta.FindStatusCondition(env.WorkloadOfJob(g, low).Status.Conditions, musterv1beta1.WorkloadPreempted)
	// Both times are whole seconds, rounded down: 6 s apart or more means
	// at least 6 s of run.
	g.Expect(preempted.LastTransitionTime.Sub(admittedAt)).To(BeNumerically(">=", 6*time.Second), "preempted only after its minimum runtime")
	running(t, urgent)
}
