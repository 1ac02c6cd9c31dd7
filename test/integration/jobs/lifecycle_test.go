package jobs

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

func TestDeletedWorkloadOfPendingJobIsRecreated(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	q := setupQueues(t, "1")
	j := q.gpuJob("recreate", 1, "2")
	g.Expect(env.Client.Create(context.Background(), j)).To(Succeed())
	expectPending(t, j, "insufficient quota")
	old := workloadOf(g, j)
	g.Expect(env.Client.Delete(context.Background(), old)).To(Succeed())
	g.Eventually(func(g Gomega) {
		wl := workloadOf(g, j)
		g.Expect(wl.UID).NotTo(Equal(old.UID))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	expectPending(t, j, "insufficient quota")
}

func TestDeletingJobRemovesWorkloadAndFreesQuota(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "4")
	running, waiting := q.gpuJob("running", 1, "4"), q.gpuJob("waiting", 1, "4")
	g.Expect(env.Client.Create(ctx, running)).To(Succeed())
	expectRunning(t, running)
	g.Expect(env.Client.Create(ctx, waiting)).To(Succeed())
	expectPending(t, waiting, "insufficient quota")

	wl := workloadOf(g, running)
	g.Expect(env.Client.Delete(ctx, running, client.PropagationPolicy("Background"))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(wl), wl))
	}, framework.Timeout, framework.Interval).Should(BeTrue(), "the workload goes with its job")
	expectRunning(t, waiting)
}

func TestQueueLabelIsLockedWhileJobHoldsQuota(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "4")
	other := MakeLocalQueue("other", q.ns).ClusterQueue(q.cq).Obj()
	g.Expect(env.Client.Create(ctx, other)).To(Succeed())

	admitted, pending := q.gpuJob("admitted", 1, "4"), q.gpuJob("pending", 1, "4")
	g.Expect(env.Client.Create(ctx, admitted)).To(Succeed())
	expectRunning(t, admitted)
	g.Expect(env.Client.Create(ctx, pending)).To(Succeed())
	expectPending(t, pending, "insufficient quota")

	got := getJob(g, admitted)
	got.Labels[musterv1beta1.QueueNameLabel] = "other"
	g.Expect(env.Client.Update(ctx, got)).To(MatchError(ContainSubstring("the queue cannot change while the job holds quota")))

	g.Eventually(func() error {
		got := getJob(g, pending)
		got.Labels[musterv1beta1.QueueNameLabel] = "other"
		return env.Client.Update(ctx, got)
	}, framework.Timeout, framework.Interval).Should(Succeed(), "a pending job may move")
	g.Eventually(func(g Gomega) {
		g.Expect(workloadOf(g, pending).Spec.QueueName).To(BeEquivalentTo("other"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestKueueQueueLabelIsAccepted(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	q := setupQueues(t, "4")
	j := MakeJob("kueue-user", q.ns).Label(musterv1beta1.KueueQueueNameLabel, q.lq).Request(gpu, "2").Obj()
	g.Expect(env.Client.Create(context.Background(), j)).To(Succeed())
	g.Expect(isSuspended(j)).To(BeTrue())
	expectRunning(t, j)
}

func TestKueueQueueLabelCanBeSwitchedOff(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t, func(c *configv1beta1.Configuration) {
		c.Integrations.AcceptKueueQueueLabel = ptr.To(false)
	})
	q := setupQueues(t, "4")
	j := MakeJob("left-to-kueue", q.ns).Label(musterv1beta1.KueueQueueNameLabel, q.lq).Request(gpu, "2").Obj()
	g.Expect(env.Client.Create(ctx, j)).To(Succeed())
	g.Expect(isSuspended(j)).To(BeFalse(), "Muster leaves Kueue's jobs to Kueue")
	consistently(t, func(g Gomega) {
		var wls musterv1beta1.WorkloadList
		g.Expect(env.Client.List(ctx, &wls, client.InNamespace(q.ns))).To(Succeed())
		g.Expect(wls.Items).To(BeEmpty())
	})
}

func TestJobAndWorkloadEventsTellTheStory(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	q := setupQueues(t, "4")
	j := q.gpuJob("story", 1, "2")
	g.Expect(env.Client.Create(context.Background(), j)).To(Succeed())
	expectRunning(t, j)
	complete(t, j)
	g.Eventually(func(g Gomega) {
		g.Expect(eventsFor(g, q.ns, j.Name)).To(ContainElements(
			"CreatedWorkload", "QuotaReserved", "Started", "Finished"))
		// One event per admission: the reservation is the admission.
		g.Expect(eventsFor(g, q.ns, j.Name)).NotTo(ContainElement("Admitted"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func TestSystemNamespacesAreLeftAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "4")
	j := MakeJob("system-job-"+q.ns, "kube-system").Queue(q.lq).Request(gpu, "1").Obj()
	g.Expect(env.Client.Create(ctx, j)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, j) })
	g.Expect(isSuspended(j)).To(BeFalse(), "the webhook skips kube-system")
	consistently(t, func(g Gomega) {
		g.Expect(isSuspended(getJob(g, j))).To(BeFalse(), "so does the reconciler")
		var wls musterv1beta1.WorkloadList
		g.Expect(env.Client.List(ctx, &wls, client.InNamespace("kube-system"))).To(Succeed())
		g.Expect(wls.Items).To(BeEmpty())
	})
}

// TestEvictedJobIsStoppedRestoredAndRequeued: when something evicts an
// admitted workload (preemption, a stopped queue), its job is suspended with
// its original placement and the workload goes back to the queue.
func TestEvictedJobIsStoppedRestoredAndRequeued(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "4")
	j := MakeJob("evicted", q.ns).Queue(q.lq).Request(gpu, "4").NodeSelector("zone", "a").Obj()
	g.Expect(env.Client.Create(ctx, j)).To(Succeed())
	expectRunning(t, j)
	g.Expect(getJob(g, j).Spec.Template.Spec.NodeSelector).To(Equal(map[string]string{"zone": "a", "gpu": "a100"}))

	// Hold the queue so the requeued workload stays pending, then evict.
	setStopPolicy(g, q.cq, musterv1beta1.Hold)
	expectActive(t, q.cq, metav1.ConditionFalse, musterv1beta1.ReasonStopped)
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		wl := workloadOf(g, j)
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{
			Type: musterv1beta1.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: musterv1beta1.ReasonPreempted,
			Message: "Preempted to make room for a test"})
		return env.Client.Status().Update(ctx, wl)
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := getJob(g, j)
		g.Expect(isSuspended(got)).To(BeTrue())
		g.Expect(got.Spec.Template.Spec.NodeSelector).To(Equal(map[string]string{"zone": "a"}), "original placement restored")
		wl := workloadOf(g, j)
		g.Expect(wl.Status.Admission).To(BeNil(), "quota released")
		g.Expect(meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadRequeued)).To(BeTrue())
	}, framework.Timeout, framework.Interval).Should(Succeed())
	expectPending(t, j, "ClusterQueue "+q.cq+" is inactive: ClusterQueue is stopped")
	g.Expect(eventsFor(g, q.ns, j.Name)).To(ContainElement("Stopped"))

	setStopPolicy(g, q.cq, musterv1beta1.None)
	expectRunning(t, j)
}

func setStopPolicy(g Gomega, cq string, p musterv1beta1.StopPolicy) {
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var obj musterv1beta1.ClusterQueue
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: cq}, &obj); err != nil {
			return err
		}
		obj.Spec.StopPolicy = &p
		return env.Client.Update(context.Background(), &obj)
	})).To(Succeed())
}

// TestWorkloadPriorityClassOrdersTheQueue: with the quota taken, the
// higher-priority job waiting is admitted first when quota frees up, even
// though it was created later.
func TestWorkloadPriorityClassOrdersTheQueue(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "4")
	wpc := MakeWorkloadPriorityClass("urgent-"+q.ns, 1000)
	g.Expect(env.Client.Create(ctx, wpc)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, wpc) })

	running := q.gpuJob("running", 1, "4")
	g.Expect(env.Client.Create(ctx, running)).To(Succeed())
	expectRunning(t, running)
	low := q.gpuJob("low", 1, "4")
	g.Expect(env.Client.Create(ctx, low)).To(Succeed())
	expectPending(t, low, "insufficient quota")
	high := MakeJob("high", q.ns).Queue(q.lq).Request(gpu, "4").Label(musterv1beta1.WorkloadPriorityClassLabel, wpc.Name).Obj()
	g.Expect(env.Client.Create(ctx, high)).To(Succeed())
	expectPending(t, high, "insufficient quota")
	g.Expect(*workloadOf(g, high).Spec.Priority).To(BeEquivalentTo(1000))

	complete(t, running)
	expectRunning(t, high)
	consistently(t, func(g Gomega) { g.Expect(isSuspended(getJob(g, low))).To(BeTrue()) })
}

// TestResizedJobIsEvictedAndAdmittedAtItsNewSize: a running Job whose
// parallelism grows past its admission is stopped and queued again at its
// new size; it never runs more pods than its quota.
func TestResizedJobIsEvictedAndAdmittedAtItsNewSize(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "4")
	j := q.gpuJob("grows", 2, "1")
	j.Spec.Completions = ptrInt32(8) // parallelism, not completions, bounds the pods
	g.Expect(env.Client.Create(ctx, j)).To(Succeed())
	expectRunning(t, j)
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := getJob(g, j)
		got.Spec.Parallelism = ptrInt32(6)
		return env.Client.Update(ctx, got)
	})).To(Succeed())
	expectPending(t, j, "6 requested, 4 available")
	g.Expect(workloadOf(g, j).Spec.PodSets[0].Count).To(BeEquivalentTo(6))
	// At least once: the requeued workload may be admitted again at its old
	// size before it is updated, and is then evicted again, before it starts.
	g.Expect(framework.Evictions(q.cq, musterv1beta1.ReasonJobChanged)).To(BeNumerically(">=", 1))
}

// TestDeactivatedWorkloadIsEvicted: spec.active=false on an admitted
// workload stops its job and releases the quota.
func TestDeactivatedWorkloadIsEvicted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "4")
	j := q.gpuJob("deactivated", 1, "4")
	g.Expect(env.Client.Create(ctx, j)).To(Succeed())
	expectRunning(t, j)
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		wl := workloadOf(g, j)
		wl.Spec.Active = ptrBool(false)
		return env.Client.Update(ctx, wl)
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(isSuspended(getJob(g, j))).To(BeTrue())
		g.Expect(workloadOf(g, j).Status.Admission).To(BeNil())
	}, framework.Timeout, framework.Interval).Should(Succeed())
	g.Expect(framework.Evictions(q.cq, musterv1beta1.ReasonInactiveWorkload)).To(BeEquivalentTo(1))
	next := q.gpuJob("next", 1, "4")
	g.Expect(env.Client.Create(ctx, next)).To(Succeed())
	expectRunning(t, next)
}

func ptrInt32(v int32) *int32 { return &v }
func ptrBool(v bool) *bool    { return &v }
