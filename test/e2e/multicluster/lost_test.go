//go:build e2e

package multicluster

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/musterhq/muster/internal/workload"
)

// Worker2's API server stops while a job runs there: once the manager's
// workerLostTimeout passes, the job is dispatched to worker1 and runs
// there; when worker2's API server is back, what it still had of the job
// is deleted, so the job ends up running in worker1 only.
func TestLostWorkersJobRunsInTheOtherAndNotTwice(t *testing.T) {
	ns := namespace(t, "mc-lost")
	queues(t, ns, "8", "0", "8")
	j := job(t, ns, "lost", 4, "")
	eventually(t, time.Minute, func(g Gomega) {
		g.Expect(managerWorkload(g, j).Status.ClusterName).To(Equal("worker2"))
		g.Expect(runningPods(g, worker2, j)).To(Equal(4))
	})
	setQuota(t, worker1, "cq-"+ns, "8")

	stopped := time.Now()
	workers(t, "stop-apiserver", "2")
	restarted := false
	defer func() {
		if !restarted {
			workers(t, "start-apiserver", "2")
		}
	}()
	eventually(t, 2*time.Minute, func(g Gomega) {
		wl := managerWorkload(g, j)
		g.Expect(wl.Status.ClusterName).To(Equal("worker1"))
		g.Expect(workload.IsAdmitted(wl)).To(BeTrue())
		g.Expect(runningPods(g, worker1, j)).To(Equal(4))
	})
	t.Logf("running in worker1 %s after worker2's API server stopped", time.Since(stopped).Round(time.Second))

	back := time.Now()
	workers(t, "start-apiserver", "2")
	restarted = true
	eventually(t, 2*time.Minute, func(g Gomega) {
		g.Expect(remoteJob(g, worker2, j)).To(BeNil(), "worker2 still has the job")
		g.Expect(runningPods(g, worker2, j)).To(BeZero())
		g.Expect(runningPods(g, worker1, j)).To(Equal(4))
	})
	t.Logf("worker2's copy gone %s after its API server was started again", time.Since(back).Round(time.Second))
}
