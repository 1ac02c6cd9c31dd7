package jobs

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/test/framework"
)

// Deleting an admitted Workload while its job's pods run keeps the quota
// until the job is stopped: the job is suspended, and only once its pods are
// gone is the Workload released and the quota given to the next job. The
// job itself queues again with a new Workload.
func TestDeletedWorkloadKeepsItsQuotaUntilItsJobStops(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "8")
	running := q.gpuJob("running", 1, "8")
	g.Expect(env.Client.Create(ctx, running)).To(Succeed())
	expectRunning(t, running)
	setActivePods(t, running, 1) // its pod runs (envtest has no Job controller)
	wl := workloadOf(g, running)
	g.Expect(wl.Finalizers).To(ContainElement(musterv1beta1.ResourceInUseFinalizer))

	g.Expect(env.Client.Delete(ctx, wl)).To(Succeed())
	next := q.gpuJob("next", 1, "8")
	g.Expect(env.Client.Create(ctx, next)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(isSuspended(getJob(g, running))).To(BeTrue(), "the job of the deleted workload is stopped")
	}, framework.Timeout, framework.Interval).Should(Succeed())
	consistently(t, func(g Gomega) {
		g.Expect(isSuspended(getJob(g, next))).To(BeTrue(), "no quota while the stopped job's pod still runs")
		var got musterv1beta1.Workload
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(wl), &got)).To(Succeed())
		g.Expect(got.DeletionTimestamp).NotTo(BeNil())
	})

	setActivePods(t, running, 0)
	expectRunning(t, next)
	g.Eventually(func(g Gomega) {
		got := workloadOf(g, running)
		g.Expect(got.UID).NotTo(Equal(wl.UID), "the stopped job has a new workload")
		g.Expect(got.Status.Admission).To(BeNil())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// The garbage collector deletes a deleted job's Workload; with the job gone
// the quota is free at once.
func TestWorkloadOfADeletedJobIsReleased(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	q := setupQueues(t, "8")
	first := q.gpuJob("first", 1, "8")
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	expectRunning(t, first)
	wl := workloadOf(g, first)
	g.Expect(env.Client.Delete(ctx, getJob(g, first), client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(wl), &musterv1beta1.Workload{}))
	}, framework.Timeout, framework.Interval).Should(BeTrue())
	second := q.gpuJob("second", 1, "8")
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	expectRunning(t, second)
}

func setActivePods(t *testing.T, j *batchv1.Job, n int32) {
	t.Helper()
	env.SetJobActive(t, j, n)
}
