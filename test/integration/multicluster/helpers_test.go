package multicluster

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const gpu = framework.GPU

// lostTimeout is the patience of a test that loses a worker: the probe's
// interval, the worker-lost timeout and the re-dispatch.
const lostTimeout = 60 * time.Second

// queues is one namespace with a LocalQueue "main" in every cluster: in the
// manager on a ClusterQueue with the dispatch check, in each worker on a
// ClusterQueue of its own quota.
type queues struct {
	ns string
}

func newQueues(t *testing.T, managerQuota, quota1, quota2 string) queues {
	t.Helper()
	ns := manager.NewNamespace(t, "mc", nil)
	for _, c := range []struct {
		env    *framework.Env
		quota  string
		checks []string
	}{{manager, managerQuota, []string{check}}, {worker1, quota1, nil}, {worker2, quota2, nil}} {
		if c.env != manager {
			c.env.CreateAll(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
		c.env.CreateAll(t, MakeResourceFlavor("f-"+ns).QuotaOnly().Obj(),
			MakeClusterQueue("cq-"+ns).ResourceGroup(MakeFlavorQuotas("f-"+ns).Resource(gpu, c.quota).Obj()).AdmissionChecks(c.checks...).Obj(),
			MakeLocalQueue("main", ns).ClusterQueue("cq-"+ns).Obj())
	}
	return queues{ns: ns}
}

// job submits a Job of pods pods of one GPU each, handed to the
// multi-cluster dispatch.
func (q queues) job(t *testing.T, name string, pods int32) *batchv1.Job {
	t.Helper()
	j := MakeJob(name, q.ns).Queue("main").Parallelism(pods).Request(gpu, "1").ManagedBy(musterv1beta1.MultiClusterManagedBy).Obj()
	manager.CreateAll(t, j)
	return j
}

// setQuota changes a ClusterQueue's GPU quota in a cluster.
func (q queues) setQuota(t *testing.T, env *framework.Env, quota string) {
	t.Helper()
	eventually(t, lostTimeout, func(g Gomega) {
		var cq musterv1beta1.ClusterQueue
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: "cq-" + q.ns}, &cq)).To(Succeed())
		cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = resource.MustParse(quota)
		g.Expect(env.Client.Update(context.Background(), &cq)).To(Succeed())
	})
}

// dispatched waits until the job's workload is admitted in the manager
// through the check and returns the worker it runs in.
func dispatched(t *testing.T, j *batchv1.Job, timeout time.Duration) string {
	t.Helper()
	var cluster string
	eventually(t, timeout, func(g Gomega) {
		wl := manager.WorkloadOfJob(g, j)
		g.Expect(workload.IsAdmitted(wl)).To(BeTrue(), "not admitted: %v", wl.Status.AdmissionChecks)
		g.Expect(wl.Status.ClusterName).NotTo(BeEmpty())
		g.Expect(wl.Status.NominatedClusterNames).To(BeEmpty())
		st := workload.FindCheck(wl, check)
		g.Expect(st.State).To(Equal(musterv1beta1.CheckStateReady))
		g.Expect(st.Message).To(Equal(`The workload was admitted on "` + wl.Status.ClusterName + `"`))
		cluster = wl.Status.ClusterName
	})
	return cluster
}

func workerEnv(cluster string) *framework.Env {
	if cluster == "worker1" {
		return worker1
	}
	return worker2
}

func otherWorker(cluster string) *framework.Env {
	if cluster == "worker1" {
		return worker2
	}
	return worker1
}

// remoteJob is the worker's copy of a job; nil if there is none.
func remoteJob(g Gomega, env *framework.Env, j *batchv1.Job) *batchv1.Job {
	var got batchv1.Job
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(j), &got)
	if apierrors.IsNotFound(err) {
		return nil
	}
	g.Expect(err).NotTo(HaveOccurred())
	return &got
}

// copyOf is the worker's copy of a workload; nil if there is none.
func copyOf(g Gomega, env *framework.Env, wl *musterv1beta1.Workload) *musterv1beta1.Workload {
	var got musterv1beta1.Workload
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), &got)
	if apierrors.IsNotFound(err) {
		return nil
	}
	g.Expect(err).NotTo(HaveOccurred())
	return &got
}

// expectRunsOnlyIn waits until the job runs in the worker (unsuspended,
// adopting the copy of its workload) and nothing of it is in the other.
func expectRunsOnlyIn(t *testing.T, j *batchv1.Job, cluster string, timeout time.Duration) *batchv1.Job {
	t.Helper()
	var got *batchv1.Job
	eventually(t, timeout, func(g Gomega) {
		wl := manager.WorkloadOfJob(g, j)
		got = remoteJob(g, workerEnv(cluster), j)
		g.Expect(got).NotTo(BeNil(), "no job in %s", cluster)
		g.Expect(framework.IsSuspended(got)).To(BeFalse(), "job suspended in %s", cluster)
		cp := copyOf(g, workerEnv(cluster), wl)
		g.Expect(cp).NotTo(BeNil())
		g.Expect(metav1.IsControlledBy(cp, got)).To(BeTrue(), "the worker's job did not adopt its workload")
		g.Expect(remoteJob(g, otherWorker(cluster), j)).To(BeNil(), "job also in the other worker")
		g.Expect(copyOf(g, otherWorker(cluster), wl)).To(BeNil(), "copy left in the other worker")
	})
	return got
}

func eventually(t *testing.T, timeout time.Duration, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Eventually(f, timeout, framework.Interval).Should(Succeed())
}

func consistently(t *testing.T, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Consistently(f, 3*time.Second, framework.Interval).Should(Succeed())
}

// plainJob is a Job of pods one-GPU pods in the namespace's queue, with no
// spec.managedBy.
func plainJob(ns, name string, pods int32) *batchv1.Job {
	return MakeJob(name, ns).Queue("main").Parallelism(pods).Request(gpu, "1").Obj()
}
