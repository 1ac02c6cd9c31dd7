package scheduling

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// TestAdmissionFairSharingBetweenLocalQueues: a 4-GPU ClusterQueue fed by
// LocalQueues "a" and "b". With a's Jobs holding 1 and 3 GPUs, a 3-GPU Job
// of each waits, a's the older. When a's 3-GPU Job finishes, b's goes first
// under admissionMode UsageBasedAdmissionFairSharing (a still uses 1 GPU, b
// none), and a's goes first without it (priority and age); the
// LocalQueue's status shows its weighted usage.
func TestAdmissionFairSharingBetweenLocalQueues(t *testing.T) {
	env.StartManager(t)
	for _, tc := range []struct {
		name  string
		mode  musterv1beta1.AdmissionMode
		first string
	}{
		{"usage based", musterv1beta1.UsageBasedAdmissionFairSharing, "b1"},
		{"no admission fair sharing", musterv1beta1.NoAdmissionFairSharing, "a2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			cq := w.queue(t, "a", "4", func(cq *musterv1beta1.ClusterQueue) {
				cq.Spec.Cohort = ""
				cq.Spec.AdmissionScope = &musterv1beta1.AdmissionScope{AdmissionMode: tc.mode}
			})
			env.CreateAll(t, MakeLocalQueue("b", w.ns).ClusterQueue(cq).Obj())
			a0, a1 := w.job("a0", "a", "1"), w.job("a1", "a", "3")
			create(t, a0, a1)
			running(t, a0, a1)
			a2 := w.job("a2", "a", "3")
			create(t, a2)
			env.ExpectJobPending(t, a2, "insufficient quota")
			b1 := w.job("b1", "b", "3")
			create(t, b1)
			env.ExpectJobPending(t, b1, "insufficient quota")

			env.CompleteJob(t, a1)
			first, second := a2, b1
			if tc.first == "b1" {
				first, second = b1, a2
			}
			running(t, first)
			env.ExpectJobPending(t, second, "insufficient quota")
			if tc.mode == musterv1beta1.UsageBasedAdmissionFairSharing {
				NewWithT(t).Eventually(func(g Gomega) {
					var lq musterv1beta1.LocalQueue
					g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: "a"}, &lq)).To(Succeed())
					g.Expect(lq.Status.FairSharing).NotTo(BeNil())
					g.Expect(lq.Status.FairSharing.WeightedShare).To(BeEquivalentTo(1000), "a's 1 GPU, weight 1")
				}, framework.Timeout, framework.Interval).Should(Succeed())
			}
		})
	}
}
