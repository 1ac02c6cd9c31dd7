package multicluster

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	"github.com/musterhq/muster/test/framework"
)

// A job too big for worker1's quota runs in worker2, as a copy the
// worker's Muster admitted whole; its status comes back to the manager's
// job, and its end ends the manager's workload and takes the copies back.
func TestJobRunsInTheWorkerWithRoom(t *testing.T) {
	q := newQueues(t, "32", "4", "16")
	j := q.job(t, "big", 8)
	g := NewWithT(t)

	g.Expect(dispatched(t, j, framework.Timeout)).To(Equal("worker2"))
	got := expectRunsOnlyIn(t, j, "worker2", framework.Timeout)
	g.Expect(got.Spec.ManagedBy).To(BeNil(), "the worker's Job controller must run it")
	g.Expect(got.Labels).To(HaveKeyWithValue(musterv1beta1.MultiClusterOriginLabel, "muster"))
	eventually(t, framework.Timeout, func(g Gomega) {
		g.Expect(framework.IsSuspended(manager.GetJob(g, j))).To(BeFalse(), "the manager's job is not started")
	})

	worker2.CompleteJob(t, got)
	eventually(t, framework.Timeout, func(g Gomega) {
		mj := manager.GetJob(g, j)
		g.Expect(mj.Status.Succeeded).To(Equal(int32(8)), "status not mirrored")
		g.Expect(jobCondition(mj, batchv1.JobComplete)).To(BeTrue())
		wl := manager.WorkloadOfJob(g, j)
		g.Expect(workload.IsFinished(wl)).To(BeTrue())
		g.Expect(meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadFinished).Reason).To(Equal(musterv1beta1.ReasonSucceeded))
	})
	eventually(t, framework.Timeout, func(g Gomega) {
		g.Expect(remoteJob(g, worker2, j)).To(BeNil(), "the finished job is left in the worker")
	})
}

// Twenty jobs over two workers, each job in exactly one, as their quotas
// allow: 8 in worker1's 32 GPUs, 12 in worker2's 48.
func TestJobsSpreadOverTheWorkersByQuota(t *testing.T) {
	q := newQueues(t, "80", "32", "48")
	var jobs []*batchv1.Job
	for i := range 20 {
		jobs = append(jobs, q.job(t, "spread-"+string(rune('a'+i)), 4))
	}
	eventually(t, lostTimeout, func(g Gomega) {
		count := map[string]int{}
		for _, j := range jobs {
			wl := manager.WorkloadOfJob(g, j)
			g.Expect(workload.IsAdmitted(wl)).To(BeTrue(), "%s not admitted", j.Name)
			count[wl.Status.ClusterName]++
			in1, in2 := remoteJob(g, worker1, j) != nil, remoteJob(g, worker2, j) != nil
			g.Expect(in1 != in2).To(BeTrue(), "%s: in worker1 %v, in worker2 %v", j.Name, in1, in2)
		}
		g.Expect(count).To(Equal(map[string]int{"worker1": 8, "worker2": 12}))
	})
}

// A job that names another controller in spec.managedBy would not be run
// by Muster's copy in a worker: the check rejects it, as Kueue's does.
func TestJobManagedByAnotherControllerIsRejected(t *testing.T) {
	q := newQueues(t, "8", "8", "8")
	j := plainJob(q.ns, "other", 1)
	j.Spec.ManagedBy = ptr.To("example.com/other-controller")
	manager.CreateAll(t, j)
	eventually(t, framework.Timeout, func(g Gomega) {
		wl := manager.WorkloadOfJob(g, j)
		g.Expect(workload.IsActive(wl)).To(BeFalse())
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(musterv1beta1.ReasonAdmissionCheckRejected))
		g.Expect(c.Message).To(ContainSubstring(`expecting spec.managedBy to be "muster.dev/multicluster" not "example.com/other-controller"`))
	})
	consistently(t, func(g Gomega) {
		g.Expect(remoteJob(g, worker1, j)).To(BeNil())
		g.Expect(remoteJob(g, worker2, j)).To(BeNil())
	})
}

// A job submitted without spec.managedBy to a queue that dispatches is
// handed to the dispatch by the webhook, as Kueue's webhook does: written
// as for one cluster, it runs in a worker, not also in the manager.
func TestJobWithoutManagedByIsHandedToTheDispatch(t *testing.T) {
	q := newQueues(t, "8", "8", "0")
	j := plainJob(q.ns, "plain", 2)
	manager.CreateAll(t, j)
	eventually(t, framework.Timeout, func(g Gomega) {
		g.Expect(manager.GetJob(g, j).Spec.ManagedBy).To(Equal(ptr.To(musterv1beta1.MultiClusterManagedBy)))
	})
	NewWithT(t).Expect(dispatched(t, j, framework.Timeout)).To(Equal("worker1"))
	expectRunsOnlyIn(t, j, "worker1", framework.Timeout)
}

// Kueue's value of managedBy is Muster's too: a Kueue user's MultiKueue
// job runs unchanged.
func TestKueueManagedByIsDispatched(t *testing.T) {
	q := newQueues(t, "8", "8", "0")
	j := plainJob(q.ns, "kueue", 2)
	j.Spec.ManagedBy = ptr.To(musterv1beta1.KueueMultiKueueManagedBy)
	j.Labels = map[string]string{musterv1beta1.KueueQueueNameLabel: "main"}
	manager.CreateAll(t, j)
	NewWithT(t).Expect(dispatched(t, j, framework.Timeout)).To(Equal("worker1"))
	expectRunsOnlyIn(t, j, "worker1", framework.Timeout)
}

// Deleting the manager's job deletes what runs in the worker.
func TestDeletingTheManagersJobDeletesTheWorkers(t *testing.T) {
	q := newQueues(t, "8", "8", "0")
	j := q.job(t, "deleted", 2)
	dispatched(t, j, framework.Timeout)
	expectRunsOnlyIn(t, j, "worker1", framework.Timeout)
	// As kubectl deletes: in the background (envtest runs no garbage
	// collector to finish an orphaning deletion).
	NewWithT(t).Expect(manager.Client.Delete(context.Background(), j, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	eventually(t, framework.Timeout, func(g Gomega) {
		g.Expect(remoteJob(g, worker1, j)).To(BeNil())
	})
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == "True" {
			return true
		}
	}
	return false
}
