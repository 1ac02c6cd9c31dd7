//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

// reclaimingQueues are two ClusterQueues of 8 a100 GPUs in one cohort, fed
// by LocalQueues a and b: b may borrow a's idle GPUs, and a reclaims them
// by preemption.
func reclaimingQueues(t *testing.T, ns string) {
	flavor := "a100-" + ns
	mk := func(name string, p *musterv1beta1.ClusterQueuePreemption) *musterv1beta1.ClusterQueue {
		cq := MakeClusterQueue(name + "-" + ns).Cohort("team-" + ns).
			ResourceGroup(MakeFlavorQuotas(flavor).Resource("cpu", "32").Resource(gpu, "8").Obj()).Obj()
		cq.Spec.Preemption = p
		return cq
	}
	createAll(t,
		MakeResourceFlavor(flavor).NodeLabel("muster.dev/gpu", "a100").Obj(),
		mk("a", &musterv1beta1.ClusterQueuePreemption{ReclaimWithinCohort: musterv1beta1.PreemptionPolicyAny}),
		mk("b", nil),
		MakeLocalQueue("a", ns).ClusterQueue("a-"+ns).Obj(),
		MakeLocalQueue("b", ns).ClusterQueue("b-"+ns).Obj())
}

// TestBorrowingAndReclaimAtPodLevel: queue b borrows queue a's idle GPUs
// and binds 16 pods; when a's own job arrives, b's job is preempted (its
// pods go away) and a's pods are bound.
func TestBorrowingAndReclaimAtPodLevel(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	reclaimingQueues(t, ns)

	borrower := gpuJob(ns, "borrower", "b", 16, "")
	createAll(t, borrower)
	g.Eventually(func(g Gomega) int { b, _, _, _ := podsOf(g, ns, "borrower"); return b }, timeout, time.Second).Should(Equal(16),
		"b borrows a's 8 idle GPUs")

	owner := gpuJob(ns, "owner", "a", 8, "")
	createAll(t, owner)
	g.Eventually(func(g Gomega) []int {
		b, _, _, _ := podsOf(g, ns, "borrower")
		o, _, _, _ := podsOf(g, ns, "owner")
		return []int{b, o}
	}, timeout, time.Second).Should(Equal([]int{0, 8}), "a reclaims its quota: the borrower's pods go, the owner's are bound")
	var wl musterv1beta1.WorkloadList
	g.Expect(c.List(context.Background(), &wl, client.InNamespace(ns))).To(Succeed())
	preempted := 0
	for _, w := range wl.Items {
		for _, cond := range w.Status.Conditions {
			if cond.Type == musterv1beta1.WorkloadPreempted && cond.Reason == "InCohortReclamation" {
				preempted++
			}
		}
	}
	g.Expect(preempted).To(Equal(1))
}

// TestRestartMidRun: restarting Muster while one job runs and another
// waits changes nothing already decided; the waiting one runs after.
func TestRestartMidRun(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	queues(t, ns, "16", "8")
	// a runs long enough that the restart lands mid-run on a slow machine;
	// its pods are compared by UID whatever their phase, so a's finishing
	// during the check is no failure, but its pods being deleted (an
	// eviction) or replaced is.
	a, b := gpuJob(ns, "a", "main", 16, "40s"), gpuJob(ns, "b", "main", 16, "5s")
	createAll(t, a)
	g.Eventually(func(g Gomega) int { n, _, _, _ := podsOf(g, ns, "a"); return n }, timeout, time.Second).Should(Equal(16))
	createAll(t, b)
	// b has been decided (it waits, saying why) before the restart.
	g.Eventually(func(g Gomega) { waitsSaying(g, ns, "b") }, timeout, time.Second).Should(Succeed())
	uids := podUIDs(g, ns, "a")

	restartMuster(t)
	g.Consistently(func(g Gomega) {
		g.Expect(podUIDs(g, ns, "a")).To(Equal(uids), "the running job's pods are untouched")
		n, p, _, _ := podsOf(g, ns, "b")
		g.Expect(n+p).To(BeZero(), "the waiting job stays suspended")
	}, 5*time.Second, 500*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) bool { return jobSucceeded(g, ns, "a") && jobSucceeded(g, ns, "b") }, timeout, time.Second).Should(BeTrue())
}

// podUIDs are the UIDs of a job's pods that are neither being deleted nor
// failed: they stay the same while the job runs to completion untouched.
func podUIDs(g Gomega, ns, job string) map[string]bool {
	var pods corev1.PodList
	g.Expect(c.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{"job-name": job})).To(Succeed())
	out := map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed {
			out[string(p.UID)] = true
		}
	}
	return out
}
