package scheduler

import (
	"testing"

	"github.com/musterhq/muster/internal/topology"
)

// With slices, only whole slices fit: a count between two multiples of
// the slice size fits no better than the multiple below it, so fit is not
// monotonic in the count. Partial admission must still find the largest
// count that fits: 20 pods in slices of 4 per host, at least 10, on one
// 12-GPU host, is 12 (the binary search over raw counts gave up at 10).
func TestPartialAdmissionWithSlicesTakesWholeSlices(t *testing.T) {
	c := tasCache(t, 1, 1, 0, tasQueue("cq", 1000))
	c.SetNode(gpuNode("b1-r1-n1", 12))
	wl := tasWl("w", 0, 1, 20, 1, topology.Required, rackLabel)
	wl.PodSets[0].MinCount = 10
	wl.PodSets[0].Topology.SliceLevel, wl.PodSets[0].Topology.SliceSize = hostLabel, 4
	s := c.Snapshot()
	adm, mode := AssignPartial(s, s.Queue("cq"), wl)
	if adm == nil || mode < FitBorrow {
		t.Fatalf("no partial admission (mode %v), want 12 pods", mode)
	}
	if got := adm.PodSets[0].Count; got != 12 {
		t.Errorf("admitted %d pods, want 12: three whole slices", got)
	}
}
