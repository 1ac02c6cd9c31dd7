package core

import (
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/topology"
)

func TestTopologyFailedNodeIsReplacedInsideTheDomain(t *testing.T) {
	c := tasCache(t, 1, 2, 3, tasQueue("cq", 1000))
	ds := admitIn(t, c, map[string][]*Workload{"cq": {tasWl("w", 0, 1, 2, 8, topology.Required, rackLabel)}})
	d := decisionOf(ds, "w")
	placed := podsPlaced(d)
	rack := racksOf(t, d)[0]
	var lost, kept string
	for n := range placed {
		if lost == "" {
			lost = n
		} else {
			kept = n
		}
	}
	n := gpuNode(lost, 8)
	n.Ready = false
	c.SetNode(n)
	ds = Schedule(c.Snapshot(), nil)
	r := decisionOf(ds, "w")
	if r == nil || r.Admission == nil || r.Evict != NoEviction {
		t.Fatalf("decision %+v, want a replacement", r)
	}
	now := podsPlaced(r)
	if now[lost] != 0 || now[kept] != 1 || len(now) != 2 {
		t.Fatalf("placement %v, want %s kept and %s replaced", now, kept, lost)
	}
	if got := racksOf(t, r); got[0] != rack || len(got) != 1 {
		t.Fatalf("racks %v, want still %s", got, rack)
	}
	if !strings.Contains(r.Message(), "node "+lost+" of its placement failed") {
		t.Errorf("message %q", r.Message())
	}
}

func TestTopologyFailedNodeWithoutRoomEvicts(t *testing.T) {
	c := tasCache(t, 1, 2, 2, tasQueue("cq", 1000))
	ds := admitIn(t, c, map[string][]*Workload{"cq": {tasWl("w", 0, 1, 2, 8, topology.Required, rackLabel)}})
	var lost string
	for n := range podsPlaced(decisionOf(ds, "w")) {
		lost = n
		break
	}
	c.DeleteNode(lost)
	r := decisionOf(Schedule(c.Snapshot(), nil), "w")
	if r == nil || r.Evict != NodeFailed {
		t.Fatalf("decision %+v, want eviction: the rack has no other node", r)
	}
	if !strings.Contains(r.Message(), "no replacement fits") {
		t.Errorf("message %q", r.Message())
	}
}

func TestTopologyNoExecuteTaintBreaksAPlacement(t *testing.T) {
	c := tasCache(t, 1, 1, 2, tasQueue("cq", 1000))
	ds := admitIn(t, c, map[string][]*Workload{"cq": {tasWl("w", 0, 1, 1, 8, topology.Required, rackLabel)}})
	var on string
	for n := range podsPlaced(decisionOf(ds, "w")) {
		on = n
	}
	n := gpuNode(on, 8)
	n.Taints = []Taint{{Key: "maintenance", Effect: "NoSchedule"}}
	c.SetNode(n)
	if r := decisionOf(Schedule(c.Snapshot(), nil), "w"); r != nil {
		t.Fatalf("NoSchedule keeps running pods: got %+v", r)
	}
	n.Taints = []Taint{{Key: "maintenance", Effect: "NoExecute"}}
	c.SetNode(n)
	r := decisionOf(Schedule(c.Snapshot(), nil), "w")
	if r == nil || r.Admission == nil || podsPlaced(r)[on] != 0 {
		t.Fatalf("decision %+v, want the pod moved off %s", r, on)
	}
}
