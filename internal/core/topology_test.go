package core

import (
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/topology"
)

func TestTopologyRequiredRackHoldsTheWholeJob(t *testing.T) {
	c := tasCache(t, 2, 2, 4, tasQueue("cq", 128))
	// Rack b1-r1 loses half its GPUs to unmanaged pods: the 32-GPU job
	// needs a whole rack and takes the tightest one that holds it.
	for _, n := range []string{"b1-r1-n1", "b1-r1-n2"} {
		c.SetPod("default/"+n, &Pod{Node: n, Requests: Requests{gpu: 8}})
	}
	ds := admitIn(t, c, map[string][]*Workload{"cq": {tasWl("big", 0, 1, 4, 8, topology.Required, rackLabel)}})
	if got := racksOf(t, decisionOf(ds, "big")); len(got) != 1 || got[0] == "b1-r1" {
		t.Fatalf("racks = %v, want one full rack other than b1-r1", got)
	}
}

func TestTopologyFragmentedCapacityIsNotAdmitted(t *testing.T) {
	// The Kueue #4329 shape: 4 GPUs free as 2 + 2 on two nodes; quota
	// allows 4 more, yet a 4-GPU pod fits no node.
	c := tasCache(t, 1, 1, 2, tasQueue("cq", 16))
	c.SetPod("x/a", &Pod{Node: "b1-r1-n1", Requests: Requests{gpu: 6}})
	c.SetPod("x/b", &Pod{Node: "b1-r1-n2", Requests: Requests{gpu: 6}})
	ds := admitIn(t, c, map[string][]*Workload{"cq": {tasWl("w", 0, 1, 1, 4, topology.Required, hostLabel)}})
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
	var heads []*Workload
	for i := range 5 {
		heads = append(heads, tasWl(string(rune('a'+i)), 0, i, 2, 4, topology.Required, rackLabel))
	}
	ds := admitIn(t, c, map[string][]*Workload{"cq": heads})
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
	ds := admitIn(t, c, map[string][]*Workload{"cq": {tasWl("w", 0, 1, 4, 8, topology.Preferred, rackLabel)}})
	if got := racksOf(t, decisionOf(ds, "w")); len(got) != 2 {
		t.Fatalf("racks = %v, want 2 (a rack holds 2 of the 4 pods)", got)
	}
}

func TestTopologyGroupPutsMasterAndWorkersInOneRack(t *testing.T) {
	c := tasCache(t, 1, 2, 2, tasQueue("cq", 1000))
	// Rack b1-r1 has room for the workers but not the master too.
	c.SetPod("x/a", &Pod{Node: "b1-r1-n1", Requests: Requests{gpu: 8}})
	w := tasWl("pt", 0, 1, 1, 8, topology.Required, rackLabel)
	w.PodSets[0].Name = "master"
	w.PodSets[0].Topology.Group = "job"
	w.PodSets = append(w.PodSets, PodSet{Name: "worker", Count: 2, Requests: Requests{gpu: 4},
		Topology: &TopologyRequest{Mode: topology.Required, Level: rackLabel, Group: "job"}})
	ds := admitIn(t, c, map[string][]*Workload{"cq": {w}})
	if got := racksOf(t, decisionOf(ds, "pt")); !slices.Equal(got, []string{"b1-r2"}) {
		t.Fatalf("racks = %v, want master and workers together in b1-r2", got)
	}
}

func TestTopologyFlavorWithoutRoomFallsBackToTheNext(t *testing.T) {
	c := tasCache(t, 1, 1, 1)
	c.UpsertFlavor(&Flavor{Name: "spare", NodeLabels: map[string]string{"pool": "spare"}, Topology: "fabric"})
	c.SetNode(&Node{Name: "s1", Ready: true, Pods: 10, Labels: map[string]string{"pool": "spare",
		blockLabel: "b9", rackLabel: "b9-r1", hostLabel: "s1"}, Allocatable: Requests{gpu: 8}})
	c.UpsertClusterQueue(gpuQueue("cq", gpus("tas", 100), gpus("spare", 100)))
	// Quota fits on "tas", tried first, but its only node is full.
	c.SetPod("x/a", &Pod{Node: "b1-r1-n1", Requests: Requests{gpu: 8}})
	ds := admitIn(t, c, map[string][]*Workload{"cq": {tasWl("w", 0, 1, 1, 8, topology.Required, hostLabel)}})
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
	c.UpsertFlavor(&Flavor{Name: "plain"})
	c.UpsertClusterQueue(gpuQueue("cq", gpus("plain", 100), gpus("tas", 100)))
	ds := admitIn(t, c, map[string][]*Workload{"cq": {tasWl("w", 0, 1, 1, 8, topology.Required, rackLabel)}})
	if d := decisionOf(ds, "w"); d.Admission == nil || d.Admission.PodSets[0].Flavors[gpu] != "tas" {
		t.Fatalf("decision %+v, want admitted on tas, the flavor with a topology", d)
	}
}

func TestTopologyNodeFilters(t *testing.T) {
	cases := map[string]struct {
		node func(n *Node)
		ps   func(ps *PodSet)
		want bool
	}{
		"ready node fits":          {want: true},
		"not ready is not offered": {node: func(n *Node) { n.Ready = false }},
		"cordoned is not offered":  {node: func(n *Node) { n.Unschedulable = true }},
		"untolerated taint":        {node: func(n *Node) { n.Taints = []Taint{{Key: "k", Effect: "NoSchedule"}} }},
		"PreferNoSchedule is ok":   {node: func(n *Node) { n.Taints = []Taint{{Key: "k", Effect: "PreferNoSchedule"}} }, want: true},
		"tolerated taint":          {node: func(n *Node) { n.Taints = []Taint{{Key: "k", Effect: "NoSchedule"}} }, ps: func(ps *PodSet) { ps.Tolerations = []Toleration{{Key: "k", Operator: "Exists"}} }, want: true},
		"node selector mismatch":   {ps: func(ps *PodSet) { ps.NodeSelector = map[string]string{"zone": "a"} }},
		"affinity In matches": {ps: func(ps *PodSet) {
			ps.Affinity = []NodeSelectorTerm{{MatchExpressions: []NodeSelectorRequirement{{Key: rackLabel, Operator: "In", Values: []string{"b1-r1"}}}}}
		}, want: true},
		"affinity NotIn excludes": {ps: func(ps *PodSet) {
			ps.Affinity = []NodeSelectorTerm{{MatchExpressions: []NodeSelectorRequirement{{Key: rackLabel, Operator: "NotIn", Values: []string{"b1-r1"}}}}}
		}},
		"affinity by node name": {ps: func(ps *PodSet) {
			ps.Affinity = []NodeSelectorTerm{{MatchFields: []NodeSelectorRequirement{{Key: "metadata.name", Operator: "In", Values: []string{"b1-r1-n1"}}}}}
		}, want: true},
		"no pod slots left": {node: func(n *Node) { n.Pods = 0 }},
		"affinity Gt on a number": {node: func(n *Node) { n.Labels["gen"] = "5" }, ps: func(ps *PodSet) {
			ps.Affinity = []NodeSelectorTerm{{MatchExpressions: []NodeSelectorRequirement{{Key: "gen", Operator: "Gt", Values: []string{"4"}}}}}
		}, want: true},
		"empty affinity term fails": {ps: func(ps *PodSet) { ps.Affinity = []NodeSelectorTerm{{}} }},
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
			ds := admitIn(t, c, map[string][]*Workload{"cq": {w}})
			if got := decisionOf(ds, "w").Admission != nil; got != tc.want {
				t.Fatalf("admitted = %v, want %v (%s)", got, tc.want, decisionOf(ds, "w").Message())
			}
		})
	}
}

func TestTopologyPodsOfAPlacedWorkloadCountOnce(t *testing.T) {
	c := tasCache(t, 1, 1, 1, tasQueue("cq", 100))
	ds := admitIn(t, c, map[string][]*Workload{"cq": {tasWl("w", 0, 1, 2, 4, topology.Required, hostLabel)}})
	if decisionOf(ds, "w").Admission == nil {
		t.Fatal("w not admitted")
	}
	// Its pods start: they are counted through the placement, not again.
	for _, p := range []string{"ns/w-0", "ns/w-1"} {
		c.SetPod(p, &Pod{Node: "b1-r1-n1", Requests: Requests{gpu: 4}, Workload: "ns/w", PodSet: "main"})
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
	w.Admission = &Admission{ClusterQueue: "cq", PodSets: []PodSetAssignment{{Name: "main", Count: 1,
		Flavors: map[string]string{gpu: "tas"}, Usage: Requests{gpu: 4},
		Placement: &Placement{Topology: "fabric", Assignment: &topology.Assignment{PodSet: "main", Levels: tasLevels,
			Nodes: []topology.NodeCount{{Name: "b1-r1-n1", Count: 1}}, Request: topology.Resources{gpu: 4}}}}}}
	steps := map[string]func(c *Cache){
		"topology": func(c *Cache) { _ = c.UpsertTopology("fabric", tasLevels) },
		"node":     func(c *Cache) { c.SetNode(gpuNode("b1-r1-n1", 8)) },
		"pod": func(c *Cache) {
			c.SetPod("ns/w-0", &Pod{Node: "b1-r1-n1", Requests: Requests{gpu: 4}, Workload: "ns/w", PodSet: "main"})
		},
		"other":    func(c *Cache) { c.SetPod("x/o", &Pod{Node: "b1-r1-n1", Requests: Requests{gpu: 2}}) },
		"workload": func(c *Cache) { c.AddOrUpdateWorkload(w) },
	}
	for _, order := range [][]string{
		{"topology", "node", "pod", "other", "workload"},
		{"workload", "pod", "other", "node", "topology"},
		{"pod", "workload", "topology", "other", "node"},
	} {
		c := NewCache()
		for _, s := range order {
			steps[s](c)
		}
		if free := freeGPUs(t, c, "b1-r1-n1"); free != 2 {
			t.Errorf("order %v: free = %d, want 2 (8 − 4 placed − 2 other)", order, free)
		}
	}
}

func freeGPUs(t *testing.T, c *Cache, node string) int64 {
	t.Helper()
	s := c.Snapshot()
	r, _, ok := s.topologies["fabric"].Free(node)
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
	c.UpsertClusterQueue(&ClusterQueue{Name: "cq", NamespaceSelector: everything{}, Weight: 1000,
		ResourceGroups: []ResourceGroup{{Resources: []string{gpu, "cpu"}, Flavors: []FlavorQuotas{quotas("tas", map[string]int64{gpu: 100, "cpu": 100})}}}})
	c.SetPod("x/a", &Pod{Node: "b1-r2-n1", Requests: Requests{gpu: 6}})
	w := wl("w", 0, 1, 1, map[string]int64{gpu: 4, "cpu": 1})
	w.PodSets[0].Topology = &TopologyRequest{Mode: topology.Required, Level: hostLabel}
	w.PodSets[0].NodeSelector = map[string]string{rackLabel: "b1-r2"}
	msg := decisionOf(admitIn(t, c, map[string][]*Workload{"cq": {w}}), "w").Message()
	for _, want := range []string{"needs 1 cpu, 4 nvidia.com/gpu", "best kubernetes.io/hostname b1-r2-n1", "has 96 cpu, 2 nvidia.com/gpu free"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}
