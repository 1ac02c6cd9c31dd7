package scheduler

import (
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/quota"
)

// A queue whose flavor gets its nodes from a provisioning check reserves
// quota on a pool that has no nodes yet, and places the pods only once the
// check is Ready and the nodes exist (Kueue's delayed topology request).

func provisionedCache(t *testing.T, nodes ...string) *testCache {
	t.Helper()
	c := nodeFitCache(t, nodes...)
	q := coretest.GPUQueue("cq", coretest.GPUs("a100", 100))
	q.Checks = []core.CheckRule{{Name: "prov"}}
	c.UpsertClusterQueue(q)
	c.SetCheck("prov", quota.Check{Active: true, DelaysPlacement: true})
	return c
}

func TestDelayedPlacementReservesOnAnEmptyPool(t *testing.T) {
	c := provisionedCache(t)
	w := coretest.GPUWorkload("w", 0, 1, 2, 8)
	d := decisionOf(admitIn(t, c, map[string][]*core.Workload{"cq": {w}}), "w")
	if d == nil || d.Admission == nil {
		t.Fatalf("not reserved on a pool the check provisions: %s", d.Message())
	}
	if ps := d.Admission.PodSets[0]; !ps.Delayed || ps.Placement != nil {
		t.Fatalf("pod set placed before its nodes exist: delayed=%v placement=%v", ps.Delayed, ps.Placement)
	}
}

func TestDelayedPlacementWaitsForTheNodesThenPlaces(t *testing.T) {
	c := provisionedCache(t)
	w := coretest.GPUWorkload("w", 0, 1, 2, 8)
	reserveAwaitingPlacement(t, c, w)

	d := decisionOf(Schedule(c.Snapshot(), nil), "w")
	if d == nil || d.Kind() != Place || d.Admission != nil {
		t.Fatalf("want a Place decision without placement while no node exists, got %+v", d)
	}
	c.SetNode(gpuNode("b1-r1-n1", 8))
	c.SetNode(gpuNode("b1-r1-n2", 8))
	d = decisionOf(Schedule(c.Snapshot(), nil), "w")
	if d == nil || d.Kind() != Place || d.Admission == nil {
		t.Fatalf("not placed once its two nodes exist: %+v", d)
	}
	if ps := d.Admission.PodSets[0]; ps.Delayed || ps.Placement == nil || len(ps.Placement.Nodes) != 2 {
		t.Fatalf("placement = %+v, want its 2 pods on the 2 new nodes", ps.Placement)
	}
}

func TestDelayedPlacementTakesTheNodesBeforePendingWorkloads(t *testing.T) {
	c := provisionedCache(t)
	w := coretest.GPUWorkload("w", 0, 1, 2, 8)
	reserveAwaitingPlacement(t, c, w)
	c.SetNode(gpuNode("b1-r1-n1", 8))
	c.SetNode(gpuNode("b1-r1-n2", 8))
	// A queue without the check, on the same nodes, with a workload that
	// would take one of them.
	c.UpsertClusterQueue(coretest.GPUQueue("other", coretest.GPUs("a100", 100)))
	other := coretest.GPUWorkload("x", 0, 1, 1, 8)
	other.Queue = "other"
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"other": {other}})
	if d := decisionOf(ds, "w"); d == nil || d.Admission == nil {
		t.Fatalf("the provisioned workload was not placed: %+v", d)
	}
	if d := decisionOf(ds, "x"); d != nil && d.Admission != nil {
		t.Fatalf("a pending workload took the provisioned nodes: %+v", d.Admission.PodSets[0].Placement)
	}
}

func TestInactiveOrMissingCheckStopsTheQueue(t *testing.T) {
	c := nodeFitCache(t, "b1-r1-n1")
	q := coretest.GPUQueue("cq", coretest.GPUs("a100", 100))
	q.Checks = []core.CheckRule{{Name: "prov"}}
	c.UpsertClusterQueue(q)
	w := coretest.GPUWorkload("w", 0, 1, 1, 1)
	if d := decisionOf(admitIn(t, c, map[string][]*core.Workload{"cq": {w}}), "w"); d.Admission != nil {
		t.Fatal("admitted while its queue's check does not exist")
	}
	if got := c.SetCheck("prov", quota.Check{Message: "no config"}); len(got) != 1 || got[0] != "cq" {
		t.Fatalf("SetCheck returned queues %v, want [cq]", got)
	}
	if d := decisionOf(admitIn(t, c, map[string][]*core.Workload{"cq": {w}}), "w"); d.Admission != nil {
		t.Fatal("admitted while its queue's check is inactive")
	}
	c.SetCheck("prov", quota.Check{Active: true})
	if d := decisionOf(admitIn(t, c, map[string][]*core.Workload{"cq": {w}}), "w"); d.Admission == nil || d.Admission.PodSets[0].Delayed {
		t.Fatalf("a check that provisions nothing delays nothing: %+v", d)
	}
}

func TestChecksForAppliesOnlyToTheirFlavors(t *testing.T) {
	q := &core.ClusterQueue{Checks: []core.CheckRule{{Name: "all"}, {Name: "spot", OnFlavors: []string{"spot"}}}}
	onDemand := &core.Admission{PodSets: []core.PodSetAssignment{{Flavors: map[string]string{gpu: "on-demand"}}}}
	spot := &core.Admission{PodSets: []core.PodSetAssignment{{Flavors: map[string]string{gpu: "spot"}}}}
	if got := q.ChecksFor(onDemand); len(got) != 1 || got[0] != "all" {
		t.Errorf("on-demand checks = %v, want [all]", got)
	}
	if got := q.ChecksFor(spot); len(got) != 2 {
		t.Errorf("spot checks = %v, want [all spot]", got)
	}
}

// reserveAwaitingPlacement reserves w with its placement delayed and
// records that its checks said Ready, as the API would show it.
func reserveAwaitingPlacement(t *testing.T, c *testCache, w *core.Workload) {
	t.Helper()
	d := decisionOf(admitIn(t, c, map[string][]*core.Workload{"cq": {w}}), w.Name)
	if d == nil || d.Admission == nil {
		t.Fatalf("%s not reserved", w.Name)
	}
	r := *w
	r.Admission, r.AwaitingPlacement = d.Admission, true
	c.AddOrUpdateWorkload(&r)
}
