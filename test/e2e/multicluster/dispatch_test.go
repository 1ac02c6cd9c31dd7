//go:build e2e

package multicluster

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
)

// A 12-GPU job does not fit worker1's 8-GPU quota: it runs in worker2, its
// twelve pods bound there by kube-scheduler and run by kwok, and its status
// — succeeded, the Complete condition — comes back to the manager's Job,
// whose Workload finishes.
func TestJobTooBigForWorker1RunsInWorker2(t *testing.T) {
	ns := namespace(t, "mc-big")
	queues(t, ns, "32", "8", "16")
	j := job(t, ns, "big", 12, "5s")
	start := time.Now()
	eventually(t, time.Minute, func(g Gomega) {
		wl := managerWorkload(g, j)
		g.Expect(wl.Status.ClusterName).To(Equal("worker2"))
		g.Expect(workload.IsAdmitted(wl)).To(BeTrue())
		g.Expect(remoteJob(g, worker1, j)).To(BeNil())
	})
	t.Logf("dispatched to worker2 %s after submission", time.Since(start).Round(time.Millisecond))
	eventually(t, 2*time.Minute, func(g Gomega) {
		var mj batchv1.Job
		g.Expect(manager.Get(t.Context(), keyOf(j), &mj)).To(Succeed())
		g.Expect(mj.Status.Succeeded).To(Equal(int32(12)))
		g.Expect(complete(&mj)).To(BeTrue(), "no Complete condition mirrored: %v", mj.Status.Conditions)
		wl := managerWorkload(g, j)
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadFinished)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(musterv1beta1.ReasonSucceeded))
	})
	t.Logf("succeeded in the manager %s after submission", time.Since(start).Round(time.Millisecond))
}

// Twenty one-GPU jobs, twelve more than worker1's quota: they spread over
// both workers as their quotas allow, each running in exactly one.
func TestTwentyJobsSpreadOverBothWorkers(t *testing.T) {
	ns := namespace(t, "mc-spread")
	queues(t, ns, "20", "8", "16")
	var jobs []*batchv1.Job
	for i := range 20 {
		jobs = append(jobs, job(t, ns, "spread-"+itoa(i), 1, ""))
	}
	eventually(t, 2*time.Minute, func(g Gomega) {
		count := map[string]int{}
		for _, j := range jobs {
			wl := managerWorkload(g, j)
			g.Expect(workload.IsAdmitted(wl)).To(BeTrue(), "%s not admitted", j.Name)
			count[wl.Status.ClusterName]++
			r1, r2 := runningPods(g, worker1, j), runningPods(g, worker2, j)
			g.Expect(r1+r2).To(Equal(1), "%s: %d pods running in worker1, %d in worker2", j.Name, r1, r2)
		}
		g.Expect(count["worker1"]).To(BeNumerically("<=", 8))
		g.Expect(count["worker1"] + count["worker2"]).To(Equal(20))
		t.Logf("spread: %v", count)
	})
}

func complete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == "True" {
			return true
		}
	}
	return false
}
