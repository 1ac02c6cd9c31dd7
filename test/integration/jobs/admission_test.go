package jobs

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/test/framework"
)

func TestJobIsCreatedSuspended(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	q := setupQueues(t, "8")
	j := q.gpuJob("suspended", 1, "16")
	g.Expect(env.Client.Create(context.Background(), j)).To(Succeed())
	g.Expect(isSuspended(j)).To(BeTrue(), "the create response is already suspended")
	g.Expect(j.Spec.Template.Spec.NodeSelector).To(BeEmpty(), "no placement before admission")
	expectPending(t, j, "insufficient quota for nvidia.com/gpu")
	consistently(t, func(g Gomega) {
		got := getJob(g, j)
		g.Expect(isSuspended(got)).To(BeTrue())
		g.Expect(got.Spec.Template.Spec.NodeSelector).To(BeEmpty())
	})
}

func TestOnlyWhatFitsIsAdmittedAndTheRestFollowsOnFinish(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	q := setupQueues(t, "8")
	first, second := q.gpuJob("first", 1, "6"), q.gpuJob("second", 1, "6")
	g.Expect(env.Client.Create(context.Background(), first)).To(Succeed())
	expectRunning(t, first)
	g.Expect(env.Client.Create(context.Background(), second)).To(Succeed())
	expectPending(t, second, "insufficient quota for nvidia.com/gpu in flavor "+q.flavor+": 6 requested, 2 available (quota 8)")

	complete(t, first)
	g.Eventually(func(g Gomega) {
		wl := workloadOf(g, first)
		g.Expect(meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadFinished)).To(BeTrue())
	}, framework.Timeout, framework.Interval).Should(Succeed())
	expectRunning(t, second)
	wl := workloadOf(g, second)
	g.Expect(wl.Status.Admission.ClusterQueue).To(BeEquivalentTo(q.cq))
	g.Expect(wl.Status.Admission.PodSetAssignments[0].Flavors).To(HaveKeyWithValue(gpu, BeEquivalentTo(q.flavor)))
}

func TestJobLargerThanQuotaIsNeverAdmitted(t *testing.T) {
	env.StartManager(t)
	q := setupQueues(t, "12")
	j := q.gpuJob("too-big", 4, "4")
	NewWithT(t).Expect(env.Client.Create(context.Background(), j)).To(Succeed())
	expectPending(t, j, "16 requested, 12 available (quota 12)")
	consistently(t, func(g Gomega) {
		g.Expect(isSuspended(getJob(g, j))).To(BeTrue())
		g.Expect(workloadOf(g, j).Status.Admission).To(BeNil())
	})
}
