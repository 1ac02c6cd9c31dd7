package scheduler

import (
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/topology"
)

// preemptingQueue may preempt lower-priority workloads of its own.
func preemptingQueue(name string, quota int64) *core.ClusterQueue {
	cq := tasQueue(name, quota)
	cq.Preemption.WithinClusterQueue = core.PreemptLowerPriority
	return cq
}

// fill admits one low-priority 8-GPU workload per node, named after it.
func fill(t *testing.T, c *testCache, nodes ...string) {
	t.Helper()
	for i, n := range nodes {
		w := tasWl("low-"+n, 0, i, 1, 8, topology.Required, hostLabel)
		w.PodSets[0].Affinity = []core.NodeSelectorTerm{{MatchFields: []core.NodeSelectorRequirement{{Key: "metadata.name", Operator: "In", Values: []string{n}}}}}
		ds := admitIn(t, c, map[string][]*core.Workload{"cq": {w}})
		if d := decisionOf(ds, w.Name); d.Admission == nil {
			t.Fatalf("fill %s: %s", n, d.Message())
		}
	}
}

func TestTopologyPreemptionFreesOneDomain(t *testing.T) {
	// Quota is plentiful; the nodes are full. A 2-node job requiring one
	// rack must evict the two workloads of one rack, not one per rack.
	c := tasCache(t, 1, 2, 2, preemptingQueue("cq", 1000))
	fill(t, c, "b1-r1-n1", "b1-r1-n2", "b1-r2-n1", "b1-r2-n2")
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {tasWl("high", 10, 100, 2, 8, topology.Required, rackLabel)}})
	d := decisionOf(ds, "high")
	if len(d.Victims) != 2 {
		t.Fatalf("victims %v (%s), want the two of one rack", victimNames(d), d.Message())
	}
	v := victimNames(d)
	sameRack := (slices.Contains(v, "low-b1-r1-n1") && slices.Contains(v, "low-b1-r1-n2")) ||
		(slices.Contains(v, "low-b1-r2-n1") && slices.Contains(v, "low-b1-r2-n2"))
	if !sameRack {
		t.Fatalf("victims %v are scattered over racks", v)
	}
}

func TestTopologyNoPreemptionWhenNoDomainCanBeFreed(t *testing.T) {
	// One rack holds 2 nodes; a 3-node job requiring one rack never fits,
	// whatever is evicted: nobody is preempted.
	c := tasCache(t, 1, 2, 2, preemptingQueue("cq", 1000))
	fill(t, c, "b1-r1-n1", "b1-r2-n1")
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {tasWl("high", 10, 100, 3, 8, topology.Required, rackLabel)}})
	d := decisionOf(ds, "high")
	if len(d.Victims) != 0 || d.Admission != nil {
		t.Fatalf("victims %v admission %v, want neither", victimNames(d), d.Admission)
	}
}

func TestTopologyPreemptionWhenQuotaIsShortToo(t *testing.T) {
	// Quota 32 is used up by four 8-GPU workloads; the preemptor needs 16
	// in one rack: two victims, in one rack.
	c := tasCache(t, 1, 2, 2, preemptingQueue("cq", 32))
	fill(t, c, "b1-r1-n1", "b1-r1-n2", "b1-r2-n1", "b1-r2-n2")
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {tasWl("high", 10, 100, 2, 8, topology.Required, rackLabel)}})
	d := decisionOf(ds, "high")
	v := victimNames(d)
	if len(v) != 2 || v[0][:len("low-b1-rX")] != v[1][:len("low-b1-rX")] {
		t.Fatalf("victims %v (%s), want two of one rack", v, d.Message())
	}
}

func victimNames(d *Decision) []string {
	var out []string
	for _, v := range d.Victims {
		out = append(out, v.Workload.Name)
	}
	slices.Sort(out)
	return out
}

func TestTopologyShortageWithoutVictimsDoesNotHoldTheQueue(t *testing.T) {
	// Unmanaged pods fill rack 1's first node; the big job needs a whole
	// rack it cannot get by preempting anyone. It waits, parked, and the
	// queue's smaller job is admitted meanwhile.
	c := tasCache(t, 1, 1, 2, preemptingQueue("cq", 1000))
	c.SetPod("x/a", &core.Pod{Node: "b1-r1-n1", Requests: core.Requests{gpu: 8}})
	big := tasWl("big", 10, 1, 2, 8, topology.Required, rackLabel)
	small := tasWl("small", 0, 2, 1, 8, topology.Required, hostLabel)
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {big, small}})
	if d := decisionOf(ds, "big"); d.Admission != nil || len(d.Victims) > 0 || !d.Park {
		t.Fatalf("big: %+v (%s), want parked without victims", d, d.Message())
	}
	if d := decisionOf(ds, "small"); d.Admission == nil {
		t.Fatalf("small: %s, want admitted on the free node", d.Message())
	}
}
