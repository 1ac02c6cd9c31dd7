package multicluster

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	"github.com/musterhq/muster/test/framework"
)

// A copy the worker evicts (here: deactivated there) sends the workload
// back to the manager's queue with the check's retry backoff (an eviction
// for the job's own sake must not loop through the workers), and what ran
// in the worker is taken back.
func TestEvictedInTheWorkerIsRequeuedWithABackoff(t *testing.T) {
	q := newQueues(t, "8", "8", "0")
	j := q.job(t, "evicted", 2)
	dispatched(t, j, framework.Timeout)
	expectRunsOnlyIn(t, j, "worker1", framework.Timeout)

	eventually(t, framework.Timeout, func(g Gomega) {
		cp := copyOf(g, worker1, manager.WorkloadOfJob(g, j))
		g.Expect(cp).NotTo(BeNil())
		cp.Spec.Active = ptr.To(false)
		g.Expect(worker1.Client.Update(context.Background(), cp)).To(Succeed())
	})
	eventually(t, lostTimeout, func(g Gomega) {
		wl := manager.WorkloadOfJob(g, j)
		st := workload.FindCheck(wl, check)
		g.Expect(workload.CheckRetries(st)).To(BeNumerically(">=", 1), "not retried")
		g.Expect(workload.HoldsQuota(wl)).To(BeFalse(), "the quota is not released")
		g.Expect(workload.RequeueAt(wl)).To(BeTemporally(">", time.Now().Add(30*time.Second)), "requeued without a backoff")
		g.Expect(framework.IsSuspended(manager.GetJob(g, j))).To(BeTrue())
		g.Expect(remoteJob(g, worker1, j)).To(BeNil(), "the evicted job is left in the worker")
	})
}

// A job deleted in the worker behind the manager's back is dispatched
// again, not lost.
func TestJobDeletedInTheWorkerIsDispatchedAgain(t *testing.T) {
	q := newQueues(t, "8", "8", "0")
	j := q.job(t, "vanished", 2)
	dispatched(t, j, framework.Timeout)
	first := expectRunsOnlyIn(t, j, "worker1", framework.Timeout)
	NewWithT(t).Expect(worker1.Client.Delete(context.Background(), first, client.PropagationPolicy("Background"))).To(Succeed())
	eventually(t, lostTimeout, func(g Gomega) {
		again := remoteJob(g, worker1, j)
		g.Expect(again).NotTo(BeNil())
		g.Expect(again.UID).NotTo(Equal(first.UID))
		g.Expect(workload.IsAdmitted(manager.WorkloadOfJob(g, j))).To(BeTrue())
	})
}

// A worker lost for longer than workerLostTimeout has its job dispatched
// to another; when it answers again, what it still runs of the job is
// deleted there, so the job is left running in one worker only.
func TestLostWorkersJobsMoveAndDoNotRunTwice(t *testing.T) {
	q := newQueues(t, "8", "0", "8")
	j := q.job(t, "lost", 4)
	NewWithT(t).Expect(dispatched(t, j, framework.Timeout)).To(Equal("worker2"))
	expectRunsOnlyIn(t, j, "worker2", framework.Timeout)
	q.setQuota(t, worker1, "8")

	proxy2.Cut()
	restored := false
	defer func() {
		if !restored {
			_ = proxy2.Restore()
		}
	}()
	eventually(t, lostTimeout, func(g Gomega) {
		wl := manager.WorkloadOfJob(g, j)
		g.Expect(wl.Status.ClusterName).To(Equal("worker1"))
		g.Expect(workload.FindCheck(wl, check).State).To(Equal(musterv1beta1.CheckStateReady))
		got := remoteJob(g, worker1, j)
		g.Expect(got).NotTo(BeNil())
		g.Expect(framework.IsSuspended(got)).To(BeFalse())
	})
	NewWithT(t).Expect(proxy2.Restore()).To(Succeed())
	restored = true
	expectRunsOnlyIn(t, j, "worker1", lostTimeout)
}

// A restart of the manager's Muster changes nothing decided: the job runs
// where it ran, the same object, and nothing is sent anywhere else.
func TestManagerRestartChangesNothing(t *testing.T) {
	q := newQueues(t, "8", "8", "8")
	j := q.job(t, "restart", 2)
	cluster := dispatched(t, j, framework.Timeout)
	before := expectRunsOnlyIn(t, j, cluster, framework.Timeout)

	managerMuster.Stop(t)
	m, err := manager.StartManagerE(managerConfig)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	managerMuster = m
	consistently(t, func(g Gomega) {
		wl := manager.WorkloadOfJob(g, j)
		g.Expect(wl.Status.ClusterName).To(Equal(cluster))
		g.Expect(workload.IsAdmitted(wl)).To(BeTrue())
		got := remoteJob(g, workerEnv(cluster), j)
		g.Expect(got).NotTo(BeNil())
		g.Expect(got.UID).To(Equal(before.UID))
		g.Expect(remoteJob(g, otherWorker(cluster), j)).To(BeNil())
	})
}
