package jobs

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// A job that cannot start with its placement (its node selector contradicts
// the node labels its flavor had edited after admission) is not retried
// forever while holding quota: its Workload finishes as FailedToStart, the
// job stays suspended, and the quota goes to the next job.
func TestJobThatCannotStartReleasesItsQuota(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	mgr := env.StartManager(t)
	q := setupQueues(t, "8")
	stuck := MakeJob("stuck", q.ns).Queue(q.lq).Request(gpu, "8").NodeSelector("gpu", "h100").Obj()
	g.Expect(env.Client.Create(ctx, stuck)).To(Succeed())
	expectPending(t, stuck, "doesn't match node selector gpu=h100")

	// As if admitted before the flavor's labels were edited.
	mgr.Stop(t)
	wl := workloadOf(g, stuck)
	now := metav1.Now()
	wl.Status.Admission = &musterv1beta1.Admission{ClusterQueue: musterv1beta1.ClusterQueueReference(q.cq),
		PodSetAssignments: []musterv1beta1.PodSetAssignment{{Name: "main", Count: ptr.To[int32](1),
			Flavors:       map[corev1.ResourceName]musterv1beta1.ResourceFlavorReference{gpu: musterv1beta1.ResourceFlavorReference(q.flavor)},
			ResourceUsage: corev1.ResourceList{gpu: resource.MustParse("8")}}}}
	for _, typ := range []string{musterv1beta1.WorkloadQuotaReserved, musterv1beta1.WorkloadAdmitted} {
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: typ, LastTransitionTime: now})
	}
	g.Expect(env.Client.Status().Update(ctx, wl)).To(Succeed())
	env.StartManager(t)

	g.Eventually(func(g Gomega) {
		c := meta.FindStatusCondition(workloadOf(g, stuck).Status.Conditions, musterv1beta1.WorkloadFinished)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(musterv1beta1.ReasonFailedToStart))
		g.Expect(c.Message).To(ContainSubstring("node selector gpu=h100 conflicts with the flavor's gpu=a100"))
		g.Expect(eventsFor(g, q.ns, stuck.Name)).To(ContainElement(musterv1beta1.ReasonFailedToStart))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	g.Expect(isSuspended(getJob(g, stuck))).To(BeTrue())
	next := q.gpuJob("next", 1, "8")
	g.Expect(env.Client.Create(ctx, next)).To(Succeed())
	expectRunning(t, next)
}
