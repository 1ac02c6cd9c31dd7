package scheduler

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/topology"
)

func TestTopologyFailedNodeIsReplacedInsideTheDomain(t *testing.T) {
	c := tasCache(t, 1, 2, 3, tasQueue("cq", 1000))
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("w", 0, 1, 2, 8, topology.Required, rackLabel)}})
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
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("w", 0, 1, 2, 8, topology.Required, rackLabel)}})
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
	c := tasCache(t, 1, 1, 3, tasQueue("cq", 1000))
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("w", 0, 1, 2, 8, topology.Required, rackLabel)}})
	var on string
	for n := range podsPlaced(decisionOf(ds, "w")) {
		on = n
	}
	n := gpuNode(on, 8)
	n.Taints = []core.Taint{{Key: "maintenance", Effect: "NoSchedule"}}
	c.SetNode(n)
	if r := decisionOf(Schedule(c.Snapshot(), nil), "w"); r != nil {
		t.Fatalf("NoSchedule keeps running pods: got %+v", r)
	}
	n.Taints = []core.Taint{{Key: "maintenance", Effect: "NoExecute"}}
	c.SetNode(n)
	r := decisionOf(Schedule(c.Snapshot(), nil), "w")
	if r == nil || r.Admission == nil || podsPlaced(r)[on] != 0 {
		t.Fatalf("decision %+v, want the pod moved off %s", r, on)
	}
}

// A pod set placed whole on one node of a pinned flavor is pinned through
// its job's template (a hostname node selector, no gate), which a running
// job cannot change: when the node fails, moving the placement would
// strand the replacement pods on the dead node. The job is requeued whole
// instead, even with room elsewhere.
func TestTopologyPodSetPinnedToOneNodeIsRequeuedWhole(t *testing.T) {
	c := tasCache(t, 1, 1, 2, tasQueue("cq", 1000))
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("w", 0, 1, 8, 1, topology.Required, hostLabel)}})
	var on string
	for n := range podsPlaced(decisionOf(ds, "w")) {
		on = n
	}
	c.DeleteNode(on)
	r := decisionOf(Schedule(c.Snapshot(), nil), "w")
	if r == nil || r.Evict != NodeFailed {
		t.Fatalf("decision %+v, want the workload evicted to be requeued whole", r)
	}
	if !strings.Contains(r.Message(), "pinned to node "+on+" by its job's template") {
		t.Errorf("message %q", r.Message())
	}
}

// Pods lost on a failed node count as failures of a batch Job: moving them
// when they exceed what its job tolerates would fail the job. Within the
// budget they are moved; past it the job is requeued whole.
func TestTopologyLossBeyondWhatTheJobToleratesRequeuesWhole(t *testing.T) {
	for name, tc := range map[string]struct {
		tolerated *int32
		evicted   bool
	}{
		"no bound known":        {nil, false},
		"tolerates the 4 lost":  {ptr.To[int32](4), false},
		"tolerates only 3 more": {ptr.To[int32](3), true},
	} {
		t.Run(name, func(t *testing.T) {
			c := tasCache(t, 1, 1, 3, tasQueue("cq", 1000))
			wl := tasWl("w", 0, 1, 8, 2, topology.Required, rackLabel)
			wl.PodFailuresTolerated = tc.tolerated
			ds := admitIn(t, c, map[string][]*core.Workload{"cq": {wl}})
			var lost string
			for n, count := range podsPlaced(decisionOf(ds, "w")) {
				if count == 4 {
					lost = n
				}
			}
			if lost == "" {
				t.Fatalf("placement %v, want two nodes of 4 pods", podsPlaced(decisionOf(ds, "w")))
			}
			c.DeleteNode(lost)
			r := decisionOf(Schedule(c.Snapshot(), nil), "w")
			switch {
			case r == nil:
				t.Fatal("no decision")
			case tc.evicted && (r.Evict != NodeFailed || !strings.Contains(r.Message(), "tolerates 3 more")):
				t.Errorf("decision %+v (%q), want requeued whole", r, r.Message())
			case !tc.evicted && (r.Admission == nil || podsPlaced(r)[lost] != 0):
				t.Errorf("decision %+v, want the 4 pods moved", r)
			}
		})
	}
}
