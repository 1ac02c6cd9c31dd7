package scheduler

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/quota"
	"github.com/musterhq/muster/internal/topology"
)

// Node fit on a flavor without a Topology: the flavor is placed in the
// implicit one-level topology of the nodes (NodesTopology), so a workload
// is admitted only where its pods can really be packed.

// nodeFitCache has the flavor "a100" checking node fit over nodes labelled
// pool=tas (gpuNode), a queue with plenty of quota, and n nodes of 8 GPUs.
func nodeFitCache(t *testing.T, nodes ...string) *testCache {
	t.Helper()
	c := newTestCache()
	c.UpsertFlavor(&core.Flavor{Name: "a100", NodeLabels: map[string]string{"pool": "tas"}, Topology: quota.NodesTopology})
	c.UpsertClusterQueue(coretest.GPUQueue("cq", coretest.GPUs("a100", 100)))
	for _, n := range nodes {
		c.SetNode(gpuNode(n, 8))
	}
	return c
}

func freeOn(t *testing.T, c *testCache, node string) int64 {
	t.Helper()
	r, _, ok := c.Snapshot().Topologies[quota.NodesTopology].Free(node)
	if !ok {
		t.Fatalf("node %s not among the nodes", node)
	}
	return r[gpu]
}

func TestNodeFitFragmentedGPUsWaitWithTheClosestNodes(t *testing.T) {
	// The demo's case (Kueue #4329): 6 + 6 of 8 GPUs used on two nodes, a
	// 4-GPU pod fits the quota but no node. It must wait, naming how close
	// the nodes come, and be admitted once one frees.
	c := nodeFitCache(t, "b1-r1-n1", "b1-r1-n2")
	c.SetPod("x/a", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 6}})
	c.SetPod("x/b", &core.Pod{Node: "b1-r1-n2", Requests: core.Requests{gpu: 6}})
	w := coretest.GPUWorkload("w", 0, 1, 1, 4)
	d := decisionOf(admitIn(t, c, map[string][]*core.Workload{"cq": {w}}), "w")
	if d.Admission != nil {
		t.Fatalf("admitted onto nodes with 2 GPUs free each: %+v", d.Admission.PodSets[0].Placement)
	}
	if msg := d.Message(); !strings.Contains(msg, "flavor a100") || !strings.Contains(msg, "closest node b1-r1-n1 has 2 nvidia.com/gpu free") {
		t.Errorf("reason %q does not say what the closest node has free", msg)
	}
	c.DeletePod("x/b")
	d = decisionOf(admitIn(t, c, map[string][]*core.Workload{"cq": {w}}), "w")
	if d.Admission == nil {
		t.Fatalf("not admitted once a node freed: %s", d.Message())
	}
	if got := podsPlaced(d); got["b1-r1-n2"] != 1 {
		t.Errorf("placed %v, want the freed node", got)
	}
}

func TestNodeFitPodsAcrossNodesFitWhenEachPodFits(t *testing.T) {
	// Free GPUs split 2 + 2: two 2-GPU pods fit (one per node), one 4-GPU
	// pod does not, though both ask 4 of the quota.
	c := nodeFitCache(t, "b1-r1-n1", "b1-r1-n2")
	c.SetPod("x/a", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 6}})
	c.SetPod("x/b", &core.Pod{Node: "b1-r1-n2", Requests: core.Requests{gpu: 6}})
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {coretest.GPUWorkload("big", 0, 1, 1, 4), coretest.GPUWorkload("pair", 0, 2, 2, 2)}})
	if decisionOf(ds, "big").Admission != nil {
		t.Error("a 4-GPU pod admitted on 2 + 2 free")
	}
	if d := decisionOf(ds, "pair"); d.Admission == nil {
		t.Errorf("two 2-GPU pods not admitted on 2 + 2 free: %s", d.Message())
	}
}

func TestNodeFitOnlyTheFlavorsNodes(t *testing.T) {
	// A node without the flavor's labels is not offered, however free.
	c := nodeFitCache(t, "b1-r1-n1")
	other := gpuNode("b1-r1-n2", 8)
	other.Labels["pool"] = "other"
	c.SetNode(other)
	c.SetPod("x/a", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 6}})
	if d := decisionOf(admitIn(t, c, map[string][]*core.Workload{"cq": {coretest.GPUWorkload("w", 0, 1, 1, 4)}}), "w"); d.Admission != nil {
		t.Fatalf("admitted onto a node of another flavor: %v", podsPlaced(d))
	}
}

func TestNodeFitNoNodesAdmitsNothing(t *testing.T) {
	c := nodeFitCache(t)
	d := decisionOf(admitIn(t, c, map[string][]*core.Workload{"cq": {coretest.GPUWorkload("w", 0, 1, 1, 1)}}), "w")
	if d.Admission != nil {
		t.Fatal("admitted with no node of the flavor")
	}
	// A new user's first job on a flavor whose nodes are not labelled: the
	// reason says what to do.
	if msg := d.Message(); !strings.Contains(msg, "none of the flavor's nodes qualifies") || !strings.Contains(msg, "nodeFit to None") {
		t.Errorf("reason %q", msg)
	}
}

// placedWorkload is an admitted workload of count pods of 4 GPUs whose pod
// set "main" is placed on the given nodes (pods per node).
func placedWorkload(name string, nodes map[string]int32) *core.Workload {
	var total int32
	a := &topology.Assignment{PodSet: "main", Levels: []string{hostLabel}, Request: topology.Resources{gpu: 4}}
	for _, n := range slices.Sorted(maps.Keys(nodes)) {
		a.Nodes = append(a.Nodes, topology.NodeCount{Name: n, Count: nodes[n]})
		total += nodes[n]
	}
	w := coretest.GPUWorkload(name, 0, 1, total, 4)
	w.Admission = &core.Admission{ClusterQueue: "cq", PodSets: []core.PodSetAssignment{{Name: "main", Count: total,
		Flavors: map[string]string{gpu: "a100"}, Usage: core.Requests{gpu: 4 * int64(total)},
		Placement: &core.Placement{Topology: quota.NodesTopology, Assignment: a}}}}
	return w
}

func TestCapacityPodBoundOutsideItsPlacementCountsWhereItIs(t *testing.T) {
	// With node fit Check kube-scheduler binds: it may pick another node
	// than the admission's. The pod takes the node it is on, and the room
	// kept for it on the placed node is given back.
	c := nodeFitCache(t, "b1-r1-n1", "b1-r1-n2")
	c.AddOrUpdateWorkload(placedWorkload("w", map[string]int32{"b1-r1-n1": 1}))
	if free := freeOn(t, c, "b1-r1-n1"); free != 4 {
		t.Fatalf("before binding: n1 free = %d, want 4 (the placement's room)", free)
	}
	c.SetPod("ns/w-0", &core.Pod{Node: "b1-r1-n2", Requests: core.Requests{gpu: 4}, Workload: "ns/w", PodSet: "main"})
	if n1, n2 := freeOn(t, c, "b1-r1-n1"), freeOn(t, c, "b1-r1-n2"); n1 != 8 || n2 != 4 {
		t.Errorf("bound on n2: free n1 = %d, n2 = %d, want 8 and 4", n1, n2)
	}
}

func TestCapacityPodLeftOnANodeThePlacementMovedFrom(t *testing.T) {
	// After a NotReady blip the placement moved to n2; the node comes back
	// with the old pod still running. Both nodes are taken: the old pod
	// where it runs, the placement's room on n2 only while the old pod is
	// not live (the Job makes no replacement while it runs).
	c := nodeFitCache(t, "b1-r1-n1", "b1-r1-n2")
	c.SetPod("ns/w-0", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 4}, Workload: "ns/w", PodSet: "main"})
	down := gpuNode("b1-r1-n1", 8)
	down.Ready = false
	c.SetNode(down)
	c.AddOrUpdateWorkload(placedWorkload("w", map[string]int32{"b1-r1-n2": 1}))
	if free := freeOn(t, c, "b1-r1-n2"); free != 4 {
		t.Fatalf("old node down: n2 free = %d, want 4 (the moved placement)", free)
	}
	c.SetNode(gpuNode("b1-r1-n1", 8))
	if n1, n2 := freeOn(t, c, "b1-r1-n1"), freeOn(t, c, "b1-r1-n2"); n1 != 4 || n2 != 8 {
		t.Errorf("old node back with its pod: free n1 = %d, n2 = %d, want 4 (the pod) and 8", n1, n2)
	}
}

func TestCapacityTerminatingPodsCountBesideANewAdmission(t *testing.T) {
	// A workload re-admitted while its earlier pods still terminate: those
	// pods take their node until gone and fill nothing of the new
	// placement, so one node is never promised twice.
	c := nodeFitCache(t, "b1-r1-n1")
	c.SetPod("ns/w-0", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 4}, Workload: "ns/w", PodSet: "main", Terminating: true})
	c.AddOrUpdateWorkload(placedWorkload("w", map[string]int32{"b1-r1-n1": 1}))
	if free := freeOn(t, c, "b1-r1-n1"); free != 0 {
		t.Fatalf("free = %d, want 0 (4 terminating + 4 placed)", free)
	}
	c.DeletePod("ns/w-0")
	if free := freeOn(t, c, "b1-r1-n1"); free != 4 {
		t.Errorf("terminating pod gone: free = %d, want 4", free)
	}
}

func TestCapacityLivePodsFillTheirPlacement(t *testing.T) {
	// Pods on their placed nodes take what the placement took, no more;
	// when the workload ends its pods still count until deleted.
	c := nodeFitCache(t, "b1-r1-n1")
	c.AddOrUpdateWorkload(placedWorkload("w", map[string]int32{"b1-r1-n1": 2}))
	for _, p := range []string{"ns/w-0", "ns/w-1"} {
		c.SetPod(p, &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 4}, Workload: "ns/w", PodSet: "main"})
		if free := freeOn(t, c, "b1-r1-n1"); free != 0 {
			t.Fatalf("after %s: free = %d, want 0", p, free)
		}
	}
	c.DeleteWorkload("ns/w")
	if free := freeOn(t, c, "b1-r1-n1"); free != 0 {
		t.Fatalf("workload gone, pods running: free = %d, want 0", free)
	}
	c.DeletePod("ns/w-0")
	if free := freeOn(t, c, "b1-r1-n1"); free != 4 {
		t.Errorf("one pod gone: free = %d, want 4", free)
	}
}

func TestNodeFitPreemptionFreesTheNodesTheVictimIsOn(t *testing.T) {
	// The victim was placed on n1 but kube-scheduler bound it on n2 (node
	// fit Check); n1 is full of another's pod. A high-priority 8-GPU pod
	// must preempt the victim for n2, the node it really frees.
	c := newTestCache()
	c.UpsertFlavor(&core.Flavor{Name: "a100", NodeLabels: map[string]string{"pool": "tas"}, Topology: quota.NodesTopology})
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 16))
	cq.Preemption.WithinClusterQueue = core.PreemptLowerPriority
	c.UpsertClusterQueue(cq)
	c.SetNode(gpuNode("b1-r1-n1", 8))
	c.SetNode(gpuNode("b1-r1-n2", 8))
	c.SetPod("x/other", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 8}})
	victim := placedWorkload("victim", map[string]int32{"b1-r1-n1": 1})
	c.AddOrUpdateWorkload(victim)
	c.SetPod("ns/victim-0", &core.Pod{Node: "b1-r1-n2", Requests: core.Requests{gpu: 4}, Workload: "ns/victim", PodSet: "main"})
	d := decisionOf(Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {coretest.GPUWorkload("hi", 10, 2, 1, 8)}}), "hi")
	if len(d.Victims) != 1 || d.Victims[0].Workload.Name != "victim" {
		t.Fatalf("victims %v, want the victim bound on n2 (%s)", d.Victims, d.Message())
	}
}
