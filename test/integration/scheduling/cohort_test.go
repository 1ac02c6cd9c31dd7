package scheduling

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

func TestBorrowingFromTheCohort(t *testing.T) {
	env.StartManager(t)
	w := newWorld(t)
	a := w.queue(t, "a", "4")
	w.queue(t, "b", "4")
	big := w.job("big", "a", "6")
	create(t, big)
	running(t, big)
	NewWithT(t).Eventually(func(g Gomega) {
		fu := clusterQueue(g, a).Status.FlavorsReservation
		g.Expect(fu).To(HaveLen(1))
		g.Expect(fu[0].Resources).To(HaveLen(1))
		res := fu[0].Resources[0]
		g.Expect(res.Total.String()).To(Equal("6"))
		g.Expect(res.Borrowed.String()).To(Equal("2"))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	tooBig := w.job("too-big", "a", "3")
	create(t, tooBig)
	env.ExpectJobPending(t, tooBig, "3 requested, 2 available (quota 4)")
}

func TestHierarchicalCohortLendsItsOwnQuota(t *testing.T) {
	env.StartManager(t)
	w := newWorld(t)
	root := MakeCohort("root-"+w.ns, "")
	root.Spec.ResourceGroups = []musterv1beta1.ResourceGroup{MakeResourceGroup(MakeFlavorQuotas(w.flavor).Resource(gpu, "8").Obj())}
	env.CreateAll(t, root, MakeCohort(w.cohort, root.Name))
	w.queue(t, "a", "2")
	j := w.job("uses-root-quota", "a", "10")
	create(t, j)
	running(t, j)
}

func TestReclaimTakesBackLentQuota(t *testing.T) {
	env.StartManager(t)
	w := newWorld(t)
	w.queue(t, "a", "4", func(cq *musterv1beta1.ClusterQueue) {
		cq.Spec.Preemption = &musterv1beta1.ClusterQueuePreemption{ReclaimWithinCohort: musterv1beta1.PreemptionPolicyAny}
	})
	w.queue(t, "b", "4")
	bOwn, bBorrowed := w.job("b-own", "b", "4"), w.job("b-borrowed", "b", "4")
	create(t, bOwn)
	running(t, bOwn)
	create(t, bBorrowed)
	running(t, bBorrowed)

	reclaimer := w.job("reclaimer", "a", "4")
	create(t, reclaimer)
	running(t, reclaimer)
	// b's two equal jobs: one goes (b borrowed a's quota), one stays (b's
	// nominal quota is never reclaimed).
	g := NewWithT(t)
	var victim *batchv1.Job
	g.Eventually(func(g Gomega) {
		victim = nil
		for _, j := range []*batchv1.Job{bOwn, bBorrowed} {
			if framework.IsSuspended(env.GetJob(g, j)) {
				victim = j
			}
		}
		g.Expect(victim).NotTo(BeNil())
	}, framework.Timeout, framework.Interval).Should(Succeed())
	expectPreempted(t, victim, "InCohortReclamation")
	framework.HoldsFor(t, func(g Gomega) {
		g.Expect(runningCount(g, []*batchv1.Job{bOwn, bBorrowed, reclaimer})).To(Equal(2))
	})
	env.ExpectJobPending(t, victim, "insufficient quota")
	g.Eventually(func(g Gomega) []string {
		return env.EventReasons(g, w.ns, victim.Name)
	}, framework.Timeout, framework.Interval).Should(ContainElements("Preempted", "Stopped"))
}

func TestHigherPriorityPreemptsWithinTheQueue(t *testing.T) {
	env.StartManager(t)
	w := newWorld(t)
	high := MakeWorkloadPriorityClass("high-"+w.ns, 100)
	env.CreateAll(t, high)
	w.queue(t, "a", "4", func(cq *musterv1beta1.ClusterQueue) {
		cq.Spec.Cohort = ""
		cq.Spec.Preemption = &musterv1beta1.ClusterQueuePreemption{WithinClusterQueue: musterv1beta1.PreemptionPolicyLowerPriority}
	})
	low := w.job("low", "a", "4")
	create(t, low)
	running(t, low)
	sameLow := w.job("same-low", "a", "4")
	create(t, sameLow)
	env.ExpectJobPending(t, sameLow, "insufficient quota")

	urgent := w.job("urgent", "a", "4", high.Name)
	create(t, urgent)
	expectPreempted(t, low, "InClusterQueue")
	running(t, urgent)
	NewWithT(t).Expect(framework.Evictions("a-"+w.ns, musterv1beta1.ReasonPreempted)).To(BeEquivalentTo(1))
	framework.HoldsFor(t, func(g Gomega) {
		g.Expect(framework.IsSuspended(env.GetJob(g, sameLow))).To(BeTrue(), "the freed quota went to the preemptor")
	})
}

func TestNamespaceSelector(t *testing.T) {
	env.StartManager(t)
	w := newWorld(t)
	cq := w.queue(t, "a", "4", func(cq *musterv1beta1.ClusterQueue) {
		cq.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
	})
	j := w.job("outsider", "a", "1")
	create(t, j)
	env.ExpectJobPending(t, j, "namespace "+w.ns+" is not selected by the namespaceSelector of ClusterQueue "+cq)

	g := NewWithT(t)
	var ns corev1.Namespace
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: w.ns}, &ns)).To(Succeed())
	ns.Labels["team"] = "a"
	g.Expect(env.Client.Update(context.Background(), &ns)).To(Succeed())
	running(t, j)
}

func TestHoldAndDrainEvictsAdmittedJobs(t *testing.T) {
	env.StartManager(t)
	w := newWorld(t)
	cq := w.queue(t, "a", "4")
	j := w.job("drained", "a", "2")
	create(t, j)
	running(t, j)
	g := NewWithT(t)
	g.Eventually(func() error {
		obj := clusterQueue(g, cq)
		p := musterv1beta1.HoldAndDrain
		obj.Spec.StopPolicy = &p
		return env.Client.Update(context.Background(), obj)
	}, framework.Timeout, framework.Interval).Should(Succeed())
	env.ExpectJobPending(t, j, "ClusterQueue "+cq+" is inactive: ClusterQueue is stopped")
	g.Expect(env.WorkloadOfJob(g, j).Status.Conditions).To(ContainElement(
		HaveField("Type", musterv1beta1.WorkloadEvicted)))
	g.Expect(framework.Evictions(cq, musterv1beta1.ReasonClusterQueueStopped)).To(BeEquivalentTo(1))
}
