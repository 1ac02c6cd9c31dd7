package api

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

func TestLocalQueueClusterQueueIsImmutable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	lq := MakeLocalQueue("immutable", "default").ClusterQueue("cq-a").Obj()
	g.Expect(env.Client.Create(ctx, lq)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, lq) })

	g.Expect(retryOnConflict(func() error {
		_ = env.Client.Get(ctx, clientKey(lq), lq)
		lq.Spec.ClusterQueue = "cq-b"
		return env.Client.Update(ctx, lq)
	})).To(MatchError(ContainSubstring("clusterQueue is immutable")))
	g.Expect(retryOnConflict(func() error {
		_ = env.Client.Get(ctx, clientKey(lq), lq)
		lq.Spec.StopPolicy = ptrTo(musterv1beta1.Hold)
		return env.Client.Update(ctx, lq)
	})).To(Succeed(), "other fields stay mutable")
}

func TestLocalQueueRequiresClusterQueue(t *testing.T) {
	g := NewWithT(t)
	lq := MakeLocalQueue("no-cq", "default").Obj()
	g.Expect(env.Client.Create(context.Background(), lq)).To(MatchError(ContainSubstring("spec.clusterQueue")))
}

func TestCohortValidation(t *testing.T) {
	cases := map[string]struct {
		cohort  *musterv1beta1.Cohort
		wantErr string
	}{
		"valid root with quota": {
			cohort: withGroups(MakeCohort("root", ""), MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "8").Obj()),
		},
		"valid child with limits": {
			cohort: withGroups(MakeCohort("child", "root"), MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "8", "2", "2").Obj()),
		},
		"own parent": {
			cohort:  MakeCohort("loop", "loop"),
			wantErr: "a cohort cannot be its own parent",
		},
		"limits without parent": {
			cohort:  withGroups(MakeCohort("orphan", ""), MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "8", "2").Obj()),
			wantErr: "only allowed on a cohort with a parent",
		},
		"negative quota": {
			cohort:  withGroups(MakeCohort("negative", ""), MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "-8").Obj()),
			wantErr: "nominalQuota must not be negative",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			err := env.Client.Create(ctx, tc.cohort)
			if tc.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				t.Cleanup(func() { _ = env.Client.Delete(ctx, tc.cohort) })
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
}

func TestResourceFlavorLimits(t *testing.T) {
	g := NewWithT(t)
	rf := MakeResourceFlavor("many-labels").QuotaOnly().Obj()
	rf.Spec.NodeLabels = map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
		rf.Spec.NodeLabels[k] = "x"
	}
	g.Expect(env.Client.Create(context.Background(), rf)).To(MatchError(ContainSubstring("must have at most 8 items")))
}

func TestWorkloadPodSetsImmutableWhileHoldingQuota(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	wl := MakeWorkload("holder", "default").Queue("lq").Request(corev1.ResourceCPU, "1").Obj()
	g.Expect(env.Client.Create(ctx, wl)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, wl) })

	// Pending: pod sets may still change, e.g. a suspended job resized.
	g.Expect(updateWorkload(wl, func(w *musterv1beta1.Workload) { w.Spec.PodSets[0].Count = 2 })).To(Succeed())

	g.Expect(retryOnConflict(func() error {
		if err := env.Client.Get(ctx, clientKey(wl), wl); err != nil {
			return err
		}
		wl.Status.Admission = &musterv1beta1.Admission{
			ClusterQueue: "cq",
			PodSetAssignments: []musterv1beta1.PodSetAssignment{{
				Name:          "main",
				Flavors:       map[corev1.ResourceName]musterv1beta1.ResourceFlavorReference{corev1.ResourceCPU: "default"},
				ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			}},
		}
		return env.Client.Status().Update(ctx, wl)
	})).To(Succeed())

	g.Expect(updateWorkload(wl, func(w *musterv1beta1.Workload) { w.Spec.PodSets[0].Count = 3 })).
		To(MatchError(ContainSubstring("podSets cannot change while the workload holds quota")))
	g.Expect(updateWorkload(wl, func(w *musterv1beta1.Workload) { w.Spec.QueueName = "other" })).
		To(MatchError(ContainSubstring("queueName cannot change while the workload holds quota")))
	g.Expect(updateWorkload(wl, func(w *musterv1beta1.Workload) { w.Spec.Priority = ptrTo[int32](7) })).
		To(Succeed(), "priority may change while admitted")
}

// updateWorkload applies mutate to the latest version, retrying on
// conflicts with the controllers that also write it.
func updateWorkload(wl *musterv1beta1.Workload, mutate func(*musterv1beta1.Workload)) error {
	return retryOnConflict(func() error {
		if err := env.Client.Get(context.Background(), clientKey(wl), wl); err != nil {
			return err
		}
		mutate(wl)
		return env.Client.Update(context.Background(), wl)
	})
}

func retryOnConflict(f func() error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, f)
}

func TestWorkloadValidation(t *testing.T) {
	cases := map[string]struct {
		wl      *musterv1beta1.Workload
		wantErr string
	}{
		"minCount above count": {
			wl: MakeWorkload("mincount", "default").Queue("lq").PodSets(func() musterv1beta1.PodSet {
				ps := MakePodSet("main", 2).Obj()
				ps.MinCount = ptrTo[int32](3)
				return ps
			}()).Obj(),
			wantErr: "minCount must not exceed count",
		},
		"duplicate pod set names": {
			wl:      MakeWorkload("dup", "default").Queue("lq").PodSets(MakePodSet("w", 1).Obj(), MakePodSet("w", 1).Obj()).Obj(),
			wantErr: "Duplicate value",
		},
		"no pod sets": {
			wl:      MakeWorkload("empty", "default").Queue("lq").PodSets().Obj(),
			wantErr: "spec.podSets",
		},
		"no queue": {
			wl:      MakeWorkload("noqueue", "default").Obj(),
			wantErr: "spec.queueName",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(env.Client.Create(context.Background(), tc.wl)).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
}

func withGroups(c *musterv1beta1.Cohort, flavors ...musterv1beta1.FlavorQuotas) *musterv1beta1.Cohort {
	c.Spec.ResourceGroups = []musterv1beta1.ResourceGroup{MakeResourceGroup(flavors...)}
	return c
}

func ptrTo[T any](v T) *T { return &v }

func clientKey(o client.Object) client.ObjectKey { return client.ObjectKeyFromObject(o) }

// TestFairSharingWeightMustNotBeNegative: a negative weight is refused on
// LocalQueues and ClusterQueues alike (it would sort the queue last, as
// weight 0 does, with a share that reads as the largest int64).
func TestFairSharingWeightMustNotBeNegative(t *testing.T) {
	ctx := context.Background()
	negative := resource.MustParse("-1")
	lq := MakeLocalQueue("negative-weight", "default").ClusterQueue("cq-a").Obj()
	lq.Spec.FairSharing = &musterv1beta1.FairSharing{Weight: &negative}
	cq := MakeClusterQueue("negative-weight").Obj()
	cq.Spec.FairSharing = &musterv1beta1.FairSharing{Weight: &negative}
	for _, obj := range []client.Object{lq, cq} {
		NewWithT(t).Expect(env.Client.Create(ctx, obj)).To(MatchError(ContainSubstring("weight must not be negative")), "%T", obj)
	}
	zero := resource.MustParse("0")
	lq.Spec.FairSharing.Weight = &zero
	NewWithT(t).Expect(env.Client.Create(ctx, lq)).To(Succeed(), "zero is allowed")
	t.Cleanup(func() { _ = env.Client.Delete(ctx, lq) })
}
