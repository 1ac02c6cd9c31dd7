package scheduler

import (
	"fmt"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// parkedBacklog is a tracker with ClusterQueue "full" (quota held by one
// workload) and depth pending workloads parked behind it after one cycle,
// and ClusterQueue "room" with quota free: the pending-depth sweep of the
// benchmark harness, in the core.
func parkedBacklog(tb testing.TB, depth int) *Tracker {
	tb.Helper()
	tr := NewTracker(Config{})
	tr.Cache.UpsertFlavor(&core.Flavor{Name: "a100"})
	for _, n := range []string{"full", "room"} {
		tr.UpsertClusterQueue(coretest.GPUQueue(n, coretest.GPUs("a100", 10)))
		tr.Queues.UpsertLocalQueue("ns", n, n)
	}
	hold := coretest.GPUWorkload("hold", 0, 0, 1, 10)
	hold.Queue = "full"
	hold.Admission = &core.Admission{ClusterQueue: "full", PodSets: []core.PodSetAssignment{{Name: "main", Count: 1,
		Flavors: map[string]string{"nvidia.com/gpu": "a100"}, Usage: core.Requests{"nvidia.com/gpu": coretest.Units("nvidia.com/gpu", 10)}}}}
	tr.Apply(PhaseHolding, hold)
	for i := range depth {
		w := coretest.GPUWorkload(fmt.Sprintf("w%d", i), 0, i+1, 1, 1)
		w.Queue = "full"
		tr.Apply(PhasePending, w)
	}
	runCycle(tr)
	if heads, _ := tr.Queues.Heads(); len(heads) != 0 {
		tb.Fatalf("backlog not parked: %d queues with heads", len(heads))
	}
	return tr
}

// runCycle runs one scheduling cycle as the scheduler does: heads, decide,
// park the parked, confirm the admitted.
func runCycle(tr *Tracker) []Decision {
	heads, seq := tr.Queues.Heads()
	ds := Schedule(tr.Snapshot(), heads)
	for i := range ds {
		d := &ds[i]
		switch {
		case d.Admission != nil:
			w := *d.Workload
			w.Admission = d.Admission
			tr.Apply(PhaseHolding, &w)
		case d.Park:
			tr.Queues.Park(d.Workload, seq)
		}
	}
	return ds
}

// A workload arriving, admitted and finishing in one ClusterQueue gives
// the parked backlog of another no new chance: the next cycles decide on
// the probe alone.
func TestArrivalElsewhereLeavesABacklogParked(t *testing.T) {
	tr := parkedBacklog(t, 1000)
	probe := coretest.GPUWorkload("probe", 0, 5000, 1, 1)
	probe.Queue = "room"
	tr.Apply(PhasePending, probe)
	ds := runCycle(tr)
	if len(ds) != 1 || ds[0].Admission == nil || ds[0].Workload.Name != "probe" {
		t.Fatalf("decisions %d, want the probe admitted alone", len(ds))
	}
	tr.Apply(PhaseGone, probe)
	if heads, _ := tr.Queues.Heads(); len(heads["full"]) != 0 {
		t.Errorf("the probe's end woke %d parked workloads of another queue", len(heads["full"]))
	}
}

// BenchmarkProbeBehindParkedBacklog is the core's part of a probe's time
// to admission behind a parked backlog of another ClusterQueue: its
// arrival, one cycle and its end. It should not grow with the backlog.
func BenchmarkProbeBehindParkedBacklog(b *testing.B) {
	for _, depth := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("pending=%d", depth), func(b *testing.B) {
			tr := parkedBacklog(b, depth)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				probe := coretest.GPUWorkload(fmt.Sprintf("probe%d", i), 0, depth+i, 1, 1)
				probe.Queue = "room"
				tr.Apply(PhasePending, probe)
				runCycle(tr)
				tr.Apply(PhaseGone, probe)
			}
		})
	}
}
