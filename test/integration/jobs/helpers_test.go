package jobs

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// testQueues is a flavor, a ClusterQueue and a LocalQueue of one test, in a
// namespace of its own.
type testQueues struct {
	ns, flavor, cq, lq string
}

// setupQueues creates a namespace and a flavor a100-<ns> with a GPU quota in
// a ClusterQueue and a LocalQueue feeding it.
func setupQueues(t *testing.T, gpuQuota string) testQueues {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	q := testQueues{ns: ns.Name, flavor: "a100-" + ns.Name, cq: "cq-" + ns.Name, lq: "main"}
	objs := []client.Object{
		MakeResourceFlavor(q.flavor).NodeLabel("gpu", "a100").Obj(),
		MakeClusterQueue(q.cq).ResourceGroup(MakeFlavorQuotas(q.flavor).Resource(gpu, gpuQuota).Obj()).Obj(),
		MakeLocalQueue(q.lq, q.ns).ClusterQueue(q.cq).Obj(),
	}
	for _, o := range objs {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}
	t.Cleanup(func() {
		for _, o := range objs {
			_ = env.Client.Delete(ctx, o)
		}
		_ = env.Client.Delete(ctx, ns)
	})
	return q
}

// gpuJob is a Job of n pods of perPod GPUs each in the test's queue.
func (q testQueues) gpuJob(name string, pods int32, perPod string) *batchv1.Job {
	return MakeJob(name, q.ns).Queue(q.lq).Parallelism(pods).Request(gpu, perPod).Obj()
}

func getJob(g Gomega, j *batchv1.Job) *batchv1.Job {
	var got batchv1.Job
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(j), &got)).To(Succeed())
	return &got
}

func workloadOf(g Gomega, j *batchv1.Job) *musterv1beta1.Workload {
	job := getJob(g, j)
	var wl musterv1beta1.Workload
	key := client.ObjectKey{Namespace: j.Namespace, Name: jobframework.WorkloadName("Job", j.Name, job.UID)}
	g.Expect(env.Client.Get(context.Background(), key, &wl)).To(Succeed())
	return &wl
}

func isSuspended(j *batchv1.Job) bool { return ptr.Deref(j.Spec.Suspend, false) }

// expectRunning waits until the job is unsuspended with the flavor's node
// selector.
func expectRunning(t *testing.T, j *batchv1.Job) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		got := getJob(g, j)
		g.Expect(isSuspended(got)).To(BeFalse(), "job %s still suspended", j.Name)
		g.Expect(got.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("gpu", "a100"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// expectPending waits until the job's workload says it waits, with a
// message containing want.
func expectPending(t *testing.T, j *batchv1.Job, want string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(isSuspended(getJob(g, j))).To(BeTrue())
		wl := workloadOf(g, j)
		g.Expect(wl.Status.Admission).To(BeNil())
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring(want))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// complete marks a Job finished as the Job controller would.
func complete(t *testing.T, j *batchv1.Job) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func() error {
		return markComplete(context.Background(), getJob(g, j))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func markComplete(ctx context.Context, j *batchv1.Job) error {
	now := metav1.Now()
	if j.Status.StartTime == nil {
		j.Status.StartTime = &now
	}
	j.Status.CompletionTime = &now
	j.Status.Succeeded = ptr.Deref(j.Spec.Completions, 1)
	j.Status.Conditions = append(j.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now})
	return env.Client.Status().Update(ctx, j)
}

// consistently checks f for a short while.
func consistently(t *testing.T, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Consistently(f, 2*time.Second, 100*time.Millisecond).Should(Succeed())
}

func eventsFor(g Gomega, ns, name string) []string {
	var list corev1.EventList
	g.Expect(env.Client.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name || strings.HasPrefix(e.InvolvedObject.Name, "job-"+name+"-") {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}
