// Package backstop tests the job reconciler as the backstop of the webhook:
// with no webhooks installed, or jobs created before Muster started, a
// running job that names a queue is suspended and gated all the same.
package backstop

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{Webhooks: false}, &env, false) }

const gpu = corev1.ResourceName("nvidia.com/gpu")

func setup(t *testing.T) string {
	return env.NewGPUQueue(t, "backstop", "f", "2").Namespace
}

// expectGated waits until the job is suspended with a Workload; a job that
// fits is then admitted and runs, one that does not stays suspended.
func expectGated(t *testing.T, j *batchv1.Job, fits bool) {
	NewWithT(t).Eventually(func(g Gomega) {
		var got batchv1.Job
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(j), &got)).To(Succeed())
		var wl musterv1beta1.Workload
		key := client.ObjectKey{Namespace: j.Namespace, Name: jobframework.WorkloadName("Job", j.Name, got.UID)}
		g.Expect(env.Client.Get(context.Background(), key, &wl)).To(Succeed())
		if fits {
			g.Expect(wl.Status.Admission).NotTo(BeNil())
			g.Expect(ptr.Deref(got.Spec.Suspend, false)).To(BeFalse())
			g.Expect(got.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("gpu", "a100"))
		} else {
			g.Expect(wl.Status.Admission).To(BeNil())
			g.Expect(ptr.Deref(got.Spec.Suspend, false)).To(BeTrue())
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// TestRunningJobWithoutWebhookIsSuspended (P4): no webhook, the job is
// created running; the reconciler suspends it and gates it.
func TestRunningJobWithoutWebhookIsSuspended(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ns := setup(t)
	big := MakeJob("unsuspended-big", ns).Queue("main").Request(gpu, "4").Obj()
	g.Expect(env.Client.Create(context.Background(), big)).To(Succeed())
	g.Expect(ptr.Deref(big.Spec.Suspend, false)).To(BeFalse(), "no webhook: created running")
	expectGated(t, big, false)

	small := MakeJob("unsuspended-small", ns).Queue("main").Request(gpu, "1").Obj()
	g.Expect(env.Client.Create(context.Background(), small)).To(Succeed())
	expectGated(t, small, true)
}

// TestJobsPredatingTheManagerAreGated (P5): jobs created before Muster
// starts are suspended and gated once it does.
func TestJobsPredatingTheManagerAreGated(t *testing.T) {
	g := NewWithT(t)
	ns := setup(t)
	big := MakeJob("early-big", ns).Queue("main").Request(gpu, "4").Obj()
	small := MakeJob("early-small", ns).Queue("main").Request(gpu, "2").Obj()
	g.Expect(env.Client.Create(context.Background(), big)).To(Succeed())
	g.Expect(env.Client.Create(context.Background(), small)).To(Succeed())
	env.StartManager(t)
	expectGated(t, big, false)
	expectGated(t, small, true)
}

// TestQueueOrderCountsFromTheJobsCreation: jobs submitted while Muster is
// not running keep their order, whatever order their Workloads were
// created in. The later job's Workload is made first here (as a slow or
// restarting manager may do); the earlier job still goes first.
func TestQueueOrderCountsFromTheJobsCreation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := setup(t)
	first := MakeJob("first", ns).Queue("main").Suspend(true).Request(gpu, "2").Obj()
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	time.Sleep(1100 * time.Millisecond) // creation timestamps have 1 s resolution
	second := MakeJob("second", ns).Queue("main").Suspend(true).Request(gpu, "2").Obj()
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	time.Sleep(1100 * time.Millisecond)
	createWorkloadOf(t, second)
	time.Sleep(1100 * time.Millisecond)
	createWorkloadOf(t, first)

	env.StartManager(t)
	expectGated(t, first, true)
	expectGated(t, second, false)
}

// createWorkloadOf creates a job's Workload as the job reconciler does.
func createWorkloadOf(t *testing.T, j *batchv1.Job) {
	t.Helper()
	g := NewWithT(t)
	wl := MakeWorkload(jobframework.WorkloadName("Job", j.Name, j.UID), j.Namespace).Queue("main").
		PodSets(MakePodSet("main", 1).Request(gpu, "2").Obj()).Obj()
	wl.Annotations = map[string]string{musterv1beta1.JobCreatedAtAnnotation: j.CreationTimestamp.UTC().Format(time.RFC3339)}
	g.Expect(controllerutil.SetControllerReference(j, wl, env.Scheme)).To(Succeed())
	g.Expect(env.Client.Create(context.Background(), wl)).To(Succeed())
}

// TestJobsWaitingForAStartKeepTheirOrder: jobs that exist when Muster
// starts get their Workloads from several reconcilers at once, in no order;
// the scheduler's first cycle waits for them to settle, so the oldest job
// is admitted, not whichever Workload came first.
func TestJobsWaitingForAStartKeepTheirOrder(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := setup(t)
	var jobs []*batchv1.Job
	for _, name := range []string{"oldest", "second", "third", "fourth"} {
		j := MakeJob(name, ns).Queue("main").Suspend(true).Request(gpu, "2").Obj()
		g.Expect(env.Client.Create(ctx, j)).To(Succeed())
		jobs = append(jobs, j)
		time.Sleep(1100 * time.Millisecond) // creation timestamps have 1 s resolution
	}
	env.StartManager(t)
	expectGated(t, jobs[0], true)
	for _, j := range jobs[1:] {
		expectGated(t, j, false)
	}
}
