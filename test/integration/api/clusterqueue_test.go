package api

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

func TestClusterQueueValidation(t *testing.T) {
	gpu := MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "8").Obj()
	cases := map[string]struct {
		cq      *musterv1beta1.ClusterQueue
		wantErr string
	}{
		"valid with cohort and limits": {
			cq: MakeClusterQueue("valid").Cohort("team").
				ResourceGroup(MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "8", "4", "2").Obj()).Obj(),
		},
		"negative nominalQuota": {
			cq:      MakeClusterQueue("negative").ResourceGroup(MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "-1").Obj()).Obj(),
			wantErr: "nominalQuota must not be negative",
		},
		"negative borrowingLimit": {
			cq: MakeClusterQueue("negative-borrow").Cohort("team").
				ResourceGroup(MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "1", "-2").Obj()).Obj(),
			wantErr: "borrowingLimit must not be negative",
		},
		"borrowingLimit without cohort": {
			cq:      MakeClusterQueue("no-cohort").ResourceGroup(MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "8", "4").Obj()).Obj(),
			wantErr: "borrowingLimit is only allowed in a cohort",
		},
		"lendingLimit without cohort": {
			cq:      MakeClusterQueue("no-cohort-lend").ResourceGroup(MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "8", "", "4").Obj()).Obj(),
			wantErr: "lendingLimit is only allowed in a cohort",
		},
		"lendingLimit above nominal": {
			cq: MakeClusterQueue("lend-above").Cohort("team").
				ResourceGroup(MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "8", "", "9").Obj()).Obj(),
			wantErr: "lendingLimit must not exceed nominalQuota",
		},
		"duplicate flavor in a group": {
			cq:      MakeClusterQueue("dup-flavor").ResourceGroup(gpu, gpu).Obj(),
			wantErr: "Duplicate value",
		},
		"duplicate flavor across groups": {
			cq: MakeClusterQueue("dup-flavor-groups").
				ResourceGroup(gpu).
				ResourceGroup(MakeFlavorQuotas("a100").Resource("cpu", "8").Obj()).Obj(),
			wantErr: "a flavor may appear in only one resource group",
		},
		"resource covered twice": {
			cq: MakeClusterQueue("dup-resource").
				ResourceGroup(gpu).
				ResourceGroup(MakeFlavorQuotas("h100").Resource("nvidia.com/gpu", "8").Obj()).Obj(),
			wantErr: "a resource may be covered by only one resource group",
		},
		"flavor missing a covered resource": {
			cq: MakeClusterQueue("missing-resource").ResourceGroup(
				MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "8").Resource("cpu", "64").Obj(),
				MakeFlavorQuotas("h100").Resource("nvidia.com/gpu", "8").Obj(),
			).Obj(),
			wantErr: "each flavor must list exactly the coveredResources of its group",
		},
		"unknown queueing strategy": {
			cq:      MakeClusterQueue("strategy").QueueingStrategy("LIFO").Obj(),
			wantErr: `Unsupported value: "LIFO"`,
		},
		"borrowWithinCohort without reclaim": {
			cq: MakeClusterQueue("bwc").Preemption(musterv1beta1.ClusterQueuePreemption{
				ReclaimWithinCohort: musterv1beta1.PreemptionPolicyNever,
				BorrowWithinCohort:  &musterv1beta1.BorrowWithinCohort{Policy: musterv1beta1.PreemptionPolicyLowerPriority},
			}).Obj(),
			wantErr: "borrowWithinCohort requires reclaimWithinCohort other than Never",
		},
		"withinClusterQueue Any": {
			cq: MakeClusterQueue("within-any").Preemption(musterv1beta1.ClusterQueuePreemption{
				WithinClusterQueue: musterv1beta1.PreemptionPolicyAny,
			}).Obj(),
			wantErr: `Unsupported value: "Any"`,
		},
		"yield no later than the threshold": {
			cq:      starving("yield-early", 1800, ptr.To[int32](1800)),
			wantErr: "yieldAfterSeconds must be more than afterSeconds (or 0: held room never yields)",
		},
		"yield 0: never": {cq: starving("yield-never", 1800, ptr.To[int32](0))},
		"yield later":    {cq: starving("yield-later", 1800, ptr.To[int32](7200))},
		"too many flavors": {
			cq:      MakeClusterQueue("many").ResourceGroup(manyFlavors(17)...).Obj(),
			wantErr: "must have at most 16 items",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(context.Background(), tc.cq)
			if tc.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(env.Client.Delete(context.Background(), tc.cq)).To(Succeed())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
}

func TestClusterQueueDefaults(t *testing.T) {
	g := NewWithT(t)
	cq := MakeClusterQueue("defaults").Obj()
	g.Expect(env.Client.Create(context.Background(), cq)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cq) })
	g.Expect(cq.Spec.QueueingStrategy).To(Equal(musterv1beta1.BestEffortFIFO))
	g.Expect(cq.Spec.StopPolicy).To(Equal(ptr.To(musterv1beta1.None)))
	g.Expect(cq.Spec.Preemption.WithinClusterQueue).To(Equal(musterv1beta1.PreemptionPolicyNever))
	g.Expect(cq.Spec.Preemption.ReclaimWithinCohort).To(Equal(musterv1beta1.PreemptionPolicyNever))
	g.Expect(cq.Spec.FlavorFungibility.WhenCanBorrow).To(Equal(musterv1beta1.Borrow))
	g.Expect(cq.Spec.FlavorFungibility.WhenCanPreempt).To(Equal(musterv1beta1.TryNextFlavor))
}

func manyFlavors(n int) []musterv1beta1.FlavorQuotas {
	var fs []musterv1beta1.FlavorQuotas
	for i := range n {
		fs = append(fs, MakeFlavorQuotas("f"+string(rune('a'+i))).Resource("cpu", "1").Obj())
	}
	return fs
}

// starving is a ClusterQueue holding room after afterSeconds, yielding it
// after yield (nil: the default).
func starving(name string, afterSeconds int32, yield *int32) *musterv1beta1.ClusterQueue {
	cq := MakeClusterQueue(name).Obj()
	cq.Spec.Starvation = &musterv1beta1.StarvationPolicy{AfterSeconds: ptr.To(afterSeconds), YieldAfterSeconds: yield}
	return cq
}
