package visibility

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	clocktesting "k8s.io/utils/clock/testing"

	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
)

type allNamespaces struct{}

func (allNamespaces) Matches(map[string]string) bool { return true }

// explainFixture is a 4-GPU ClusterQueue "gpu" that preempts lower
// priority, fed by team-a/main, with team-a/low (priority 0, 2 GPUs) and
// team-a/high (priority 50, 2 GPUs) admitted, and team-c/lost waiting for
// a ClusterQueue that does not exist.
func explainFixture(pending ...*core.Workload) Source {
	c := quota.NewCache()
	c.UpsertFlavor(&core.Flavor{Name: "a100"})
	c.UpsertClusterQueue(&core.ClusterQueue{Name: "gpu", NamespaceSelector: allNamespaces{}, Weight: 1000,
		Preemption: core.Preemption{WithinClusterQueue: core.PreemptLowerPriority},
		ResourceGroups: []core.ResourceGroup{{Resources: []string{"nvidia.com/gpu"}, Flavors: []core.FlavorQuotas{{
			Flavor: "a100", Resources: map[string]core.ResourceQuota{"nvidia.com/gpu": {Nominal: 4}}}}}}})
	for _, w := range []*core.Workload{admittedWl("low", 0, 2), admittedWl("high", 50, 2)} {
		c.AddOrUpdateWorkload(w)
	}
	src := fixture()
	src.Queues.UpsertClusterQueue("gpu", core.BestEffortFIFO)
	for _, w := range pending {
		src.Queues.AddOrUpdate(w)
	}
	src.Cache, src.Clock = c, clocktesting.NewFakePassiveClock(epoch)
	return src
}

func admittedWl(name string, prio int32, gpus int64) *core.Workload {
	w := pendingWl("team-a", "main", name, prio, 0)
	w.PodSets[0].Count = int32(gpus)
	w.Admission = &core.Admission{ClusterQueue: "gpu", PodSets: []core.PodSetAssignment{{Name: "main", Count: int32(gpus),
		Flavors: map[string]string{"nvidia.com/gpu": "a100"}, Usage: core.Requests{"nvidia.com/gpu": gpus}}}}
	return w
}

func explain(src Source, ns, name string) (*visibilityv1beta1.WorkloadExplanation, error) {
	ctx := genericapirequest.WithNamespace(context.Background(), ns)
	obj, err := storages(src)["workloads/explanation"].(*explanation).Get(ctx, name, nil)
	if err != nil {
		return nil, err
	}
	return obj.(*visibilityv1beta1.WorkloadExplanation), nil
}

// TestExplanationNamesTheVictimsTheSearchPicks: a 2-GPU workload of
// priority 10 fits only by preempting; the search picks the priority-0
// workload, not the higher one, and says why it may go.
func TestExplanationNamesTheVictimsTheSearchPicks(t *testing.T) {
	g := NewWithT(t)
	w := pendingWl("team-a", "main", "mid", 10, 5)
	w.PodSets[0].Count = 2
	x, err := explain(explainFixture(w), "team-a", "mid")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(x.Fit).To(Equal(visibilityv1beta1.FitByPreempting))
	g.Expect(x.ClusterQueue).To(Equal("gpu"))
	g.Expect(x.Reason).To(Equal("reason of team-a/mid"))
	g.Expect(x.Shortages).To(HaveLen(1))
	g.Expect(x.Shortages[0].Resource).To(Equal("nvidia.com/gpu"))
	g.Expect(x.Shortages[0].Available.String()).To(Equal("0"))
	g.Expect(x.Preemption.State).To(Equal(visibilityv1beta1.PreemptionWouldEvict))
	g.Expect(x.Preemption.Victims).To(Equal([]visibilityv1beta1.PreemptionVictim{
		{Name: "low", Namespace: "team-a", ClusterQueue: "gpu", Priority: 0, Reason: "InClusterQueue"}}))
}

// TestExplanationSaysWhyPreemptionCannotHelp: a priority-0 workload may
// preempt neither admitted one; the answer says how many hold what it
// lacks and that none may be preempted by it.
func TestExplanationSaysWhyPreemptionCannotHelp(t *testing.T) {
	g := NewWithT(t)
	w := pendingWl("team-a", "main", "meek", 0, 5)
	w.PodSets[0].Count = 2
	x, err := explain(explainFixture(w), "team-a", "meek")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(x.Preemption.State).To(Equal(visibilityv1beta1.PreemptionCannotHelp))
	g.Expect(x.Preemption.Message).To(ContainSubstring("none of the 2 admitted workload(s) holding what it lacks may be preempted by it"))
	g.Expect(x.Preemption.Victims).To(BeEmpty())
}

// TestExplanationOfWhatCanNeverFit: 8 GPUs in a 4-GPU queue never fit;
// the shortage and the preemption answer say waiting cannot help.
func TestExplanationOfWhatCanNeverFit(t *testing.T) {
	g := NewWithT(t)
	w := pendingWl("team-a", "main", "huge", 100, 5)
	w.PodSets[0].Count = 8
	x, err := explain(explainFixture(w), "team-a", "huge")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(x.Fit).To(Equal(visibilityv1beta1.FitNone))
	g.Expect(x.Shortages).To(HaveLen(1))
	g.Expect(x.Shortages[0].Never).To(BeTrue())
	g.Expect(x.Preemption.Message).To(ContainSubstring("more than its ClusterQueue can ever give"))
}

// TestExplanationOfAWorkloadWithoutItsClusterQueue: it is in its
// LocalQueue's order but in no ClusterQueue; no search is run.
func TestExplanationOfAWorkloadWithoutItsClusterQueue(t *testing.T) {
	g := NewWithT(t)
	x, err := explain(explainFixture(), "team-c", "c1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(x.ClusterQueue).To(BeEmpty())
	g.Expect(x.PositionInClusterQueue).To(BeNil())
	g.Expect(x.LocalQueueName).To(Equal("lost"))
	g.Expect(x.Fit).To(BeEmpty())
	g.Expect(x.Preemption).To(BeNil())
}

// TestExplanationOfWhatDoesNotWait: an admitted or unknown workload is
// not found, with a message that says what it may be.
func TestExplanationOfWhatDoesNotWait(t *testing.T) {
	g := NewWithT(t)
	_, err := explain(explainFixture(), "team-a", "low")
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("is not pending in Muster's queues"))
}

// TestExplanationPositions: the position is the workload's place in the
// order the ClusterQueue lists.
func TestExplanationPositions(t *testing.T) {
	g := NewWithT(t)
	src := fixture()
	x, err := explain(src, "team-a", "a2")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(x.PositionInClusterQueue).To(HaveValue(BeEquivalentTo(3)))
	g.Expect(x.PositionInLocalQueue).To(BeEquivalentTo(1))
	g.Expect(x.Fit).To(BeEmpty(), "without a cache no search is run")
}

// TestExplanationBeforeTheQueuesAreRebuilt: 503, as the other resources.
func TestExplanationBeforeTheQueuesAreRebuilt(t *testing.T) {
	g := NewWithT(t)
	src := fixture()
	src.Synced = func() bool { return false }
	_, err := explain(src, "team-a", "a1")
	g.Expect(apierrors.IsServiceUnavailable(err)).To(BeTrue(), "%v", err)
}
