// Package podsready tests waitForPodsReady: admitted jobs whose pods do not
// become ready in time are evicted, requeued with backoff and finally
// deactivated; with blockAdmission nothing else is admitted meanwhile.
package podsready

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{Webhooks: true}, &env, false) }

const gpu = corev1.ResourceName("nvidia.com/gpu")

// podsReady configures short timeouts: seconds, not minutes.
func podsReady(block bool) func(*configv1beta1.Configuration) {
	return func(c *configv1beta1.Configuration) {
		c.WaitForPodsReady = &configv1beta1.WaitForPodsReady{
			Enable: true, Timeout: &metav1.Duration{Duration: 2 * time.Second}, BlockAdmission: ptr.To(block),
			RequeuingStrategy: &configv1beta1.RequeuingStrategy{
				BackoffBaseSeconds: ptr.To[int32](1), BackoffMaxSeconds: ptr.To[int32](2), BackoffLimitCount: ptr.To[int32](2),
			},
		}
	}
}

func setup(t *testing.T) string {
	ns := env.NewNamespace(t, "podsready", nil)
	env.CreateAll(t,
		MakeResourceFlavor("f-"+ns).NodeLabel("pool", ns).QuotaOnly().Obj(),
		MakeClusterQueue("cq-"+ns).ResourceGroup(MakeFlavorQuotas("f-"+ns).Resource(gpu, "8").Obj()).Obj(),
		MakeLocalQueue("main", ns).ClusterQueue("cq-"+ns).Obj())
	return ns
}

func TestPodsNeverReadyAreEvictedRequeuedAndDeactivated(t *testing.T) {
	env.StartManager(t, podsReady(false))
	ns := setup(t)
	j := MakeJob("never-ready", ns).Queue("main").Request(gpu, "2").Obj()
	g := NewWithT(t)
	g.Expect(env.Client.Create(context.Background(), j)).To(Succeed())
	env.ExpectJobRunning(t, j, nil)

	// Each admission times out after 2 s; requeues 1 and 2 back off 1 s and
	// 2 s; the third timeout exceeds backoffLimitCount=2.
	seen := map[int32]bool{}
	g.Eventually(func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		if rs := wl.Status.RequeueState; rs != nil && rs.Count != nil {
			seen[*rs.Count] = true
			g.Expect(rs.RequeueAt).NotTo(BeNil())
		}
		g.Expect(wl.Spec.Active).To(Equal(ptr.To(false)), "deactivated after the limit")
	}, 40*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(seen).To(HaveKey(int32(1)), "requeue state observed after the first timeout")
	g.Expect(seen).To(HaveKey(int32(2)))
	cq := "cq-" + ns
	g.Expect(framework.Evictions(cq, musterv1beta1.ReasonPodsReadyTimeout)).To(BeEquivalentTo(2), "two timeouts requeued")
	g.Expect(framework.Evictions(cq, musterv1beta1.ReasonRequeuingLimitExceeded)).To(BeEquivalentTo(1), "the third deactivated")

	wl := env.WorkloadOfJob(g, j)
	c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Message).To(ContainSubstring("Deactivated"))
	g.Eventually(func(g Gomega) bool { return framework.IsSuspended(env.GetJob(g, j)) }, framework.Timeout, framework.Interval).Should(BeTrue())
	framework.HoldsFor(t, func(g Gomega) {
		g.Expect(framework.IsSuspended(env.GetJob(g, j))).To(BeTrue(), "a deactivated workload is not admitted again")
	})
}

func TestBlockAdmissionWaitsForReadyPods(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t, podsReady(true), func(c *configv1beta1.Configuration) {
		c.WaitForPodsReady.Timeout = &metav1.Duration{Duration: time.Minute}
	})
	ns := setup(t)
	first, second := MakeJob("first", ns).Queue("main").Request(gpu, "2").Obj(), MakeJob("second", ns).Queue("main").Request(gpu, "2").Obj()
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	env.ExpectJobRunning(t, first, nil)
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	env.ExpectJobPending(t, second, "to be ready (waitForPodsReady.blockAdmission)")

	g.Eventually(func() error { // the Job controller reports the pod ready
		got := env.GetJob(g, first)
		got.Status.Ready = ptr.To[int32](1)
		got.Status.Active = 1
		now := metav1.Now()
		got.Status.StartTime = &now
		return env.Client.Status().Update(ctx, got)
	}, framework.Timeout, framework.Interval).Should(Succeed())
	g.Eventually(func(g Gomega) bool {
		return meta.IsStatusConditionTrue(env.WorkloadOfJob(g, first).Status.Conditions, musterv1beta1.WorkloadPodsReady)
	}, framework.Timeout, framework.Interval).Should(BeTrue())
	env.ExpectJobRunning(t, second, nil)
}

// setJobPods writes the Job's ready and active pod counts, as the Job
// controller would.
func setJobPods(t *testing.T, j *batchv1.Job, ready, active int32) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		got := env.GetJob(NewWithT(t), j)
		got.Status.Ready, got.Status.Active = ptr.To(ready), active
		if got.Status.StartTime == nil {
			now := metav1.Now()
			got.Status.StartTime = &now
		}
		return env.Client.Status().Update(context.Background(), got)
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func podsReadyCondition(g Gomega, j *batchv1.Job) *metav1.Condition {
	c := meta.FindStatusCondition(env.WorkloadOfJob(g, j).Status.Conditions, musterv1beta1.WorkloadPodsReady)
	g.Expect(c).NotTo(BeNil())
	return c
}

// Pods that were all ready and stop being so: without a recoveryTimeout
// (Kueue's default) the workload keeps running; with one, it is evicted
// once the pods stay not ready that long.
func TestRecoveryTimeout(t *testing.T) {
	for name, recovery := range map[string]*metav1.Duration{"unset": nil, "1s": {Duration: time.Second}} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			env.StartManager(t, podsReady(false), func(c *configv1beta1.Configuration) { c.WaitForPodsReady.RecoveryTimeout = recovery })
			ns := setup(t)
			j := MakeJob("flaky", ns).Queue("main").Request(gpu, "2").Obj()
			g.Expect(env.Client.Create(context.Background(), j)).To(Succeed())
			env.ExpectJobRunning(t, j, nil)
			setJobPods(t, j, 1, 1)
			g.Eventually(func(g Gomega) { g.Expect(podsReadyCondition(g, j).Status).To(Equal(metav1.ConditionTrue)) },
				framework.Timeout, framework.Interval).Should(Succeed())
			setJobPods(t, j, 0, 1) // a pod restarts
			g.Eventually(func(g Gomega) {
				g.Expect(podsReadyCondition(g, j).Reason).To(Equal(musterv1beta1.ReasonWaitForRecovery))
			},
				framework.Timeout, framework.Interval).Should(Succeed())
			evicted := func(g Gomega) bool {
				return meta.IsStatusConditionTrue(env.WorkloadOfJob(g, j).Status.Conditions, musterv1beta1.WorkloadEvicted)
			}
			if recovery == nil {
				framework.HoldsFor(t, func(g Gomega) { g.Expect(evicted(g)).To(BeFalse(), "beyond the 2 s start timeout, still running") })
				return
			}
			g.Eventually(evicted, framework.Timeout, framework.Interval).Should(BeTrue())
			g.Expect(framework.Evictions("cq-"+ns, musterv1beta1.ReasonPodsReadyTimeout)).To(BeEquivalentTo(1))
		})
	}
}
