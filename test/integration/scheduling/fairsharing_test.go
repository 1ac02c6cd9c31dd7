package scheduling

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// TestFairSharingConvergesToEqualShares: two queues of equal weight borrow
// everything from their cohort. Queue a's backlog arrives first and takes
// the whole pool; when b's arrives, fair-sharing preemption gives b back
// its share until both run 4 of the 8 GPUs.
func TestFairSharingConvergesToEqualShares(t *testing.T) {
	env.StartManager(t, func(c *configv1beta1.Configuration) { c.FairSharing.Enable = true })
	w := newWorld(t)
	pool := MakeCohort(w.cohort, "")
	pool.Spec.ResourceGroups = []musterv1beta1.ResourceGroup{MakeResourceGroup(MakeFlavorQuotas(w.flavor).Resource(gpu, "8").Obj())}
	env.CreateAll(t, pool)
	reclaim := func(cq *musterv1beta1.ClusterQueue) {
		cq.Spec.Preemption = &musterv1beta1.ClusterQueuePreemption{ReclaimWithinCohort: musterv1beta1.PreemptionPolicyAny}
	}
	w.queue(t, "a", "0", reclaim)
	b := w.queue(t, "b", "0", reclaim)

	var aJobs, bJobs []*batchv1.Job
	for i := range 8 {
		aJobs = append(aJobs, w.job(fmt.Sprintf("a-%d", i), "a", "1"))
	}
	create(t, objects(aJobs)...)
	g := NewWithT(t)
	g.Eventually(func(g Gomega) int { return runningCount(g, aJobs) }, framework.Timeout, framework.Interval).Should(Equal(8))

	for i := range 8 {
		bJobs = append(bJobs, w.job(fmt.Sprintf("b-%d", i), "b", "1"))
	}
	create(t, objects(bJobs)...)
	g.Eventually(func(g Gomega) []int {
		return []int{runningCount(g, aJobs), runningCount(g, bJobs)}
	}, 2*framework.Timeout, framework.Interval).Should(Equal([]int{4, 4}))
	framework.HoldsFor(t, func(g Gomega) {
		g.Expect([]int{runningCount(g, aJobs), runningCount(g, bJobs)}).To(Equal([]int{4, 4}), "stable once shares are equal")
	})
	g.Eventually(func(g Gomega) int64 {
		fs := clusterQueue(g, b).Status.FairSharing
		g.Expect(fs).NotTo(BeNil())
		return fs.WeightedShare
	}, framework.Timeout, framework.Interval).Should(BeEquivalentTo(500), "b borrows 4 of the pool's 8: a share of 500‰")
}

// TestCohortStatusShowsItsShare: a cohort under a parent reports the share
// of the parent's pool its subtree borrows.
func TestCohortStatusShowsItsShare(t *testing.T) {
	env.StartManager(t, func(c *configv1beta1.Configuration) { c.FairSharing.Enable = true })
	w := newWorld(t)
	parent := MakeCohort("parent-"+w.ns, "")
	parent.Spec.ResourceGroups = []musterv1beta1.ResourceGroup{MakeResourceGroup(MakeFlavorQuotas(w.flavor).Resource(gpu, "8").Obj())}
	child := MakeCohort(w.cohort, parent.Name)
	env.CreateAll(t, parent, child)
	w.queue(t, "a", "0")
	j := w.job("borrower", "a", "2")
	create(t, j)
	running(t, j)
	NewWithT(t).Eventually(func(g Gomega) int64 {
		var co musterv1beta1.Cohort
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(child), &co)).To(Succeed())
		g.Expect(co.Status.FairSharing).NotTo(BeNil())
		return co.Status.FairSharing.WeightedShare
	}, framework.Timeout, framework.Interval).Should(BeEquivalentTo(250), "2 of the parent's 8")
}

func objects(jobs []*batchv1.Job) []client.Object {
	out := make([]client.Object, len(jobs))
	for i, j := range jobs {
		out[i] = j
	}
	return out
}
