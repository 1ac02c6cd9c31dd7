package scheduler

import (
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/topology"
)

func TestTopologyRequiredRackHoldsTheWholeJob(t *testing.T) {
	c := tasCache(t, 2, 2, 4, tasQueue("cq", 128))
	// Rack b1-r1 loses half its GPUs to unmanaged pods: the 32-GPU job
	// needs a whole rack and takes the tightest one that holds it.
	for _, n := range []string{"b1-r1-n1", "b1-r1-n2"} {
		c.SetPod("default/"+n, &core.Pod{Node: n, Requests: core.Requests{gpu: 8}})
	}
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("big", 0, 1, 4, 8, topology.Required, rackLabel)}})
	if got := racksOf(t, decisionOf(ds, "big")); len(got) != 1 || got[0] == "b1-r1" {
		t.Fatalf("racks = %v, want one full rack other than b1-r1", got)
	}
}

func TestTopologyFragmentedCapacityIsNotAdmitted(t *testing.T) {
	// The Kueue #4329 shape: 4 GPUs free as 2 + 2 on two nodes; quota
	// allows 4 more, yet a 4-GPU pod fits no node.
	c := tasCache(t, 1, 1, 2, tasQueue("cq", 16))
	c.SetPod("x/a", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 6}})
	c.SetPod("x/b", &core.Pod{Node: "b1-r1-n2", Requests: core.Requests{gpu: 6}})
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("w", 0, 1, 1, 4, topology.Required, hostLabel)}})
	d := decisionOf(ds, "w")
	if d.Admission != nil {
		t.Fatalf("admitted on %v; 4 GPUs are free only as 2 + 2", podsPlaced(d))
	}
	msg := d.Message()
	for _, want := range []string{"in one kubernetes.io/hostname", "holds 0 pods", "has 2 nvidia.com/gpu free", "quota allows 16 nvidia.com/gpu"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

func TestTopologyOneCycleNeverPromisesANodeTwice(t *testing.T) {
	c := tasCache(t, 1, 2, 2, tasQueue("cq", 1000))
	var heads []*core.Workload
	for i := range 5 {
		heads = append(heads, tasWl(string(rune('a'+i)), 0, i, 2, 4, topology.Required, rackLabel))
	}
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": heads})
	used := map[string]int32{}
	admitted := 0
	for i := range ds {
		if ds[i].Admission == nil {
			continue
		}
		admitted++
		for n, k := range podsPlaced(&ds[i]) {
			used[n] += k * 4
		}
	}
	if admitted != 4 {
		t.Fatalf("admitted %d, want 4 (32 GPUs hold four 8-GPU jobs)", admitted)
	}
	for n, g := range used {
		if g > 8 {
			t.Errorf("node %s promised %d GPUs, has 8", n, g)
		}
	}
}

func TestTopologyPreferredSpillsToTheFewestRacks(t *testing.T) {
	c := tasCache(t, 1, 4, 2, tasQueue("cq", 1000))
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("w", 0, 1, 4, 8, topology.Preferred, rackLabel)}})
	if got := racksOf(t, decisionOf(ds, "w")); len(got) != 2 {
		t.Fatalf("racks = %v, want 2 (a rack holds 2 of the 4 pods)", got)
	}
}

func TestTopologyGroupPutsMasterAndWorkersInOneRack(t *testing.T) {
	c := tasCache(t, 1, 2, 2, tasQueue("cq", 1000))
	// Rack b1-r1 has room for the workers but not the master too.
	c.SetPod("x/a", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 8}})
	w := tasWl("pt", 0, 1, 1, 8, topology.Required, rackLabel)
	w.PodSets[0].Name = "master"
	w.PodSets[0].Topology.Group = "job"
	w.PodSets = append(w.PodSets, core.PodSet{Name: "worker", Count: 2, Requests: core.Requests{gpu: 4},
		Topology: &core.TopologyRequest{Mode: topology.Required, Level: rackLabel, Group: "job"}})
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {w}})
	if got := racksOf(t, decisionOf(ds, "pt")); !slices.Equal(got, []string{"b1-r2"}) {
		t.Fatalf("racks = %v, want master and workers together in b1-r2", got)
	}
}

func TestTopologyFlavorWithoutRoomFallsBackToTheNext(t *testing.T) {
	c := tasCache(t, 1, 1, 1)
	c.UpsertFlavor(&core.Flavor{Name: "spare", NodeLabels: map[string]string{"pool": "spare"}, Topology: "fabric"})
	c.SetNode(&core.Node{Name: "s1", Ready: true, Pods: 10, Labels: map[string]string{"pool": "spare",
		blockLabel: "b9", rackLabel: "b9-r1", hostLabel: "s1"}, Allocatable: core.Requests{gpu: 8}})
	c.UpsertClusterQueue(coretest.GPUQueue("cq", coretest.GPUs("tas", 100), coretest.GPUs("spare", 100)))
	// Quota fits on "tas", tried first, but its only node is full.
	c.SetPod("x/a", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 8}})
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("w", 0, 1, 1, 8, topology.Required, hostLabel)}})
	d := decisionOf(ds, "w")
	if d.Admission == nil || d.Admission.PodSets[0].Flavors[gpu] != "spare" {
		t.Fatalf("decision %+v (%s), want admitted on spare", d, d.Message())
	}
	if got := podsPlaced(d); got["s1"] != 1 {
		t.Fatalf("placed %v, want the pod on s1", got)
	}
}

func TestTopologyRequestOnAFlavorWithoutTopologyTriesTheNext(t *testing.T) {
	c := tasCache(t, 1, 1, 1)
	c.UpsertFlavor(&core.Flavor{Name: "plain"})
	c.UpsertClusterQueue(coretest.GPUQueue("cq", coretest.GPUs("plain", 100), coretest.GPUs("tas", 100)))
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("w", 0, 1, 1, 8, topology.Required, rackLabel)}})
	if d := decisionOf(ds, "w"); d.Admission == nil || d.Admission.PodSets[0].Flavors[gpu] != "tas" {
		t.Fatalf("decision %+v, want admitted on tas, the flavor with a topology", d)
	}
}

func TestTopologyNodeFilters(t *testing.T) {
	cases := map[string]struct {
		node func(n *core.Node)
		ps   func(ps *core.PodSet)
		want bool
	}{
		"ready node fits":          {want: true},
		"not ready is not offered": {node: func(n *core.Node) { n.Ready = false }},
		"cordoned is not offered":  {node: func(n *core.Node) { n.Unschedulable = true }},
		"untolerated taint":        {node: func(n *core.Node) { n.Taints = []core.Taint{{Key: "k", Effect: "NoSchedule"}} }},
		"PreferNoSchedule is ok":   {node: func(n *core.Node) { n.Taints = []core.Taint{{Key: "k", Effect: "PreferNoSchedule"}} }, want: true},
		"tolerated taint":          {node: func(n *core.Node) { n.Taints = []core.Taint{{Key: "k", Effect: "NoSchedule"}} }, ps: func(ps *core.PodSet) { ps.Tolerations = []core.Toleration{{Key: "k", Operator: "Exists"}} }, want: true},
		"node selector mismatch":   {ps: func(ps *core.PodSet) { ps.NodeSelector = map[string]string{"zone": "a"} }},
		"affinity In matches": {ps: func(ps *core.PodSet) {
			ps.Affinity = []core.NodeSelectorTerm{{MatchExpressions: []core.NodeSelectorRequirement{{Key: rackLabel, Operator: "In", Values: []string{"b1-r1"}}}}}
		}, want: true},
		"affinity NotIn excludes": {ps: func(ps *core.PodSet) {
			ps.Affinity = []core.NodeSelectorTerm{{MatchExpressions: []core.NodeSelectorRequirement{{Key: rackLabel, Operator: "NotIn", Values: []string{"b1-r1"}}}}}
		}},
		"affinity by node name": {ps: func(ps *core.PodSet) {
			ps.Affinity = []core.NodeSelectorTerm{{MatchFields: []core.NodeSelectorRequirement{{Key: "metadata.name", Operator: "In", Values: []string{"b1-r1-n1"}}}}}
		}, want: true},
		"no pod slots left": {node: func(n *core.Node) { n.Pods = 0 }},
		"affinity Gt on a number": {node: func(n *core.Node) { n.Labels["gen"] = "5" }, ps: func(ps *core.PodSet) {
			ps.Affinity = []core.NodeSelectorTerm{{MatchExpressions: []core.NodeSelectorRequirement{{Key: "gen", Operator: "Gt", Values: []string{"4"}}}}}
		}, want: true},
		"empty affinity term fails": {ps: func(ps *core.PodSet) { ps.Affinity = []core.NodeSelectorTerm{{}} }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := tasCache(t, 0, 0, 0, tasQueue("cq", 100))
			n := gpuNode("b1-r1-n1", 8)
			if tc.node != nil {
				tc.node(n)
			}
			c.SetNode(n)
			w := tasWl("w", 0, 1, 1, 8, topology.Required, hostLabel)
			if tc.ps != nil {
				tc.ps(&w.PodSets[0])
			}
			ds := admitIn(t, c, map[string][]*core.Workload{"cq": {w}})
			if got := decisionOf(ds, "w").Admission != nil; got != tc.want {
				t.Fatalf("admitted = %v, want %v (%s)", got, tc.want, decisionOf(ds, "w").Message())
			}
		})
	}
}

func TestTopologyPodsOfAPlacedWorkloadCountOnce(t *testing.T) {
	c := tasCache(t, 1, 1, 1, tasQueue("cq", 100))
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("w", 0, 1, 2, 4, topology.Required, hostLabel)}})
	if decisionOf(ds, "w").Admission == nil {
		t.Fatal("w not admitted")
	}
	// Its pods start: they are counted through the placement, not again.
	for _, p := range []string{"ns/w-0", "ns/w-1"} {
		c.SetPod(p, &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 4}, Workload: "ns/w", PodSet: "main"})
	}
	if free := freeGPUs(t, c, "b1-r1-n1"); free != 0 {
		t.Fatalf("free = %d, want 0 (8 GPUs, 8 placed)", free)
	}
	// The workload finishes; its pods still run until deleted, counted on
	// their own now.
	c.DeleteWorkload("ns/w")
	if free := freeGPUs(t, c, "b1-r1-n1"); free != 0 {
		t.Fatalf("after the workload: free = %d, want 0 (its pods still run)", free)
	}
	c.DeletePod("ns/w-0")
	c.DeletePod("ns/w-1")
	if free := freeGPUs(t, c, "b1-r1-n1"); free != 8 {
		t.Fatalf("after the pods: free = %d, want 8", free)
	}
}

func TestTopologyCapacityIsTheSameInAnyEventOrder(t *testing.T) {
	// A restart replays objects in any order: pods before their nodes, the
	// admitted workload before the topology. The free capacity must come
	// out the same.
	w := tasWl("w", 0, 1, 1, 4, topology.Required, hostLabel)
	w.Admission = &core.Admission{ClusterQueue: "cq", PodSets: []core.PodSetAssignment{{Name: "main", Count: 1,
		Flavors: map[string]string{gpu: "tas"}, Usage: core.Requests{gpu: 4},
		Placement: &core.Placement{Topology: "fabric", Assignment: &topology.Assignment{PodSet: "main", Levels: tasLevels,
			Nodes: []topology.NodeCount{{Name: "b1-r1-n1", Count: 1}}, Request: topology.Resources{gpu: 4}}}}}}
	steps := map[string]func(c *testCache){
		"topology": func(c *testCache) { _ = c.UpsertTopology("fabric", tasLevels) },
		"node":     func(c *testCache) { c.SetNode(gpuNode("b1-r1-n1", 8)) },
		"pod": func(c *testCache) {
			c.SetPod("ns/w-0", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 4}, Workload: "ns/w", PodSet: "main"})
		},
		"other":    func(c *testCache) { c.SetPod("x/o", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 2}}) },
		"workload": func(c *testCache) { c.AddOrUpdateWorkload(w) },
	}
	for _, order := range [][]string{
		{"topology", "node", "pod", "other", "workload"},
		{"workload", "pod", "other", "node", "topology"},
		{"pod", "workload", "topology", "other", "node"},
	} {
		c := newTestCache()
		for _, s := range order {
			steps[s](c)
		}
		if free := freeGPUs(t, c, "b1-r1-n1"); free != 2 {
			t.Errorf("order %v: free = %d, want 2 (8 − 4 placed − 2 other)", order, free)
		}
	}
}

func freeGPUs(t *testing.T, c *testCache, node string) int64 {
	t.Helper()
	s := c.Snapshot()
	r, _, ok := s.Topologies["fabric"].Free(node)
	if !ok {
		t.Fatalf("node %s not in the topology", node)
	}
	return r[gpu]
}

func TestTopologyPendingReasonNamesAUsableDomainInKubernetesUnits(t *testing.T) {
	// Rack 1's node is free but excluded by the pod set's selector; rack
	// 2's has 2 GPUs left. The reason must name rack 2's node, and cpu in
	// cores.
	c := tasCache(t, 1, 2, 1, tasQueue("cq", 100))
	c.UpsertClusterQueue(&core.ClusterQueue{Name: "cq", NamespaceSelector: coretest.Everything{}, Weight: 1000,
		ResourceGroups: []core.ResourceGroup{{Resources: []string{gpu, "cpu"}, Flavors: []core.FlavorQuotas{coretest.Quotas("tas", map[string]int64{gpu: 100, "cpu": 100})}}}})
	c.SetPod("x/a", &core.Pod{Node: "b1-r2-n1", Requests: core.Requests{gpu: 6}})
	w := coretest.Workload("w", 0, 1, 1, map[string]int64{gpu: 4, "cpu": 1})
	w.PodSets[0].Topology = &core.TopologyRequest{Mode: topology.Required, Level: hostLabel}
	w.PodSets[0].NodeSelector = map[string]string{rackLabel: "b1-r2"}
	msg := decisionOf(admitIn(t, c, map[string][]*core.Workload{"cq": {w}}), "w").Message()
	for _, want := range []string{"needs 1 cpu, 4 nvidia.com/gpu", "best kubernetes.io/hostname b1-r2-n1", "has 96 cpu, 2 nvidia.com/gpu free"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// TestTopologyBalancedPlacementWhenConfigured: six 2-GPU pods preferring a
// rack of two 8-GPU nodes go 3 + 3 with balanced placement configured
// (Kueue's TASBalancedPlacement), 4 + 2 without (best fit, the default).
func TestTopologyBalancedPlacementWhenConfigured(t *testing.T) {
	for _, tc := range []struct {
		balanced bool
		want     []int32
	}{{false, []int32{2, 4}}, {true, []int32{3, 3}}} {
		c := tasCache(t, 1, 1, 2, tasQueue("cq", 1000))
		c.cfg.BalancedPlacement = tc.balanced
		ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("w", 0, 1, 6, 2, topology.Preferred, rackLabel)}})
		var got []int32
		for _, n := range podsPlaced(decisionOf(ds, "w")) {
			got = append(got, n)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("balanced %v: pods per node %v, want %v", tc.balanced, got, tc.want)
		}
	}
}
