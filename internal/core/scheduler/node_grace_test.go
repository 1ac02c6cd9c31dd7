package scheduler

import (
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/topology"
)

// graceCase admits a two-node workload in a rack of three with a 30 s node
// failure grace and returns the cache, one of its nodes and the cycle time.
func graceCase(t *testing.T) (*testCache, string, time.Time) {
	t.Helper()
	c := tasCache(t, 1, 1, 3, tasQueue("cq", 1000))
	c.cfg.NodeFailureGrace = 30 * time.Second
	ds := admitIn(t, c, map[string][]*core.Workload{"cq": {tasWl("w", 0, 1, 2, 8, topology.Required, rackLabel)}})
	var on string
	for n := range podsPlaced(decisionOf(ds, "w")) {
		on = n
	}
	return c, on, time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
}

// scheduleAt runs a cycle at now.
func scheduleAt(c *testCache, now time.Time) ([]Decision, *Snapshot) {
	s := c.Snapshot()
	s.SetNow(now)
	return Schedule(s, nil), s
}

// A node NotReady for less than the grace period moves nothing; the cycle
// says when the grace ends. Once it has passed, the pods are moved.
func TestNotReadyNodeFailsAfterTheGracePeriod(t *testing.T) {
	c, on, now := graceCase(t)
	n := gpuNode(on, 8)
	n.Ready, n.NotReadySince = false, now
	c.SetNode(n)

	ds, s := scheduleAt(c, now.Add(10*time.Second))
	if r := decisionOf(ds, "w"); r != nil {
		t.Fatalf("10 s into the grace: %+v, want nothing", r)
	}
	if got := s.RepairWait(); got != 20*time.Second {
		t.Errorf("repair wait %s, want 20s", got)
	}
	ds, _ = scheduleAt(c, now.Add(30*time.Second))
	r := decisionOf(ds, "w")
	if r == nil || r.Admission == nil || podsPlaced(r)[on] != 0 {
		t.Fatalf("after the grace: %+v, want the pod moved off %s", r, on)
	}
}

// A node that flaps (NotReady, then Ready again within the grace period)
// changes nothing, even in a cycle after the grace would have ended.
func TestNodeFlapWithinTheGraceChangesNothing(t *testing.T) {
	c, on, now := graceCase(t)
	n := gpuNode(on, 8)
	n.Ready, n.NotReadySince = false, now
	c.SetNode(n)
	if ds, _ := scheduleAt(c, now.Add(5*time.Second)); decisionOf(ds, "w") != nil {
		t.Fatal("moved during the grace")
	}
	c.SetNode(gpuNode(on, 8))
	ds, s := scheduleAt(c, now.Add(time.Minute))
	if r := decisionOf(ds, "w"); r != nil {
		t.Fatalf("after a flap: %+v, want nothing", r)
	}
	if s.RepairWait() != 0 {
		t.Errorf("repair wait %s after the node is back", s.RepairWait())
	}
}

// The node lifecycle's not-ready taint says what the Ready condition says:
// it waits out the grace too. A deleted node fails at once.
func TestNotReadyTaintWaitsDeletedNodeDoesNot(t *testing.T) {
	c, on, now := graceCase(t)
	n := gpuNode(on, 8)
	n.Ready, n.NotReadySince = false, now
	n.Taints = []core.Taint{{Key: "node.kubernetes.io/not-ready", Effect: "NoExecute"}}
	c.SetNode(n)
	if ds, _ := scheduleAt(c, now.Add(time.Second)); decisionOf(ds, "w") != nil {
		t.Fatal("the not-ready taint failed the node during the grace")
	}
	c.DeleteNode(on)
	ds, _ := scheduleAt(c, now.Add(2*time.Second))
	r := decisionOf(ds, "w")
	if r == nil || r.Admission == nil || podsPlaced(r)[on] != 0 {
		t.Fatalf("deleted node: %+v, want the pod moved off %s at once", r, on)
	}
}
