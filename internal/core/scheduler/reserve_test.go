package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/topology"
)

// starvationQueue is a 16-GPU queue that never preempts, holding room for
// workloads pending 30 minutes, with 15 one-GPU workloads admitted at
// epoch, each bounded to run bound (0: unbounded).
func starvationQueue(bound time.Duration) *testCache {
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 16))
	cq.StarvationAfter = 30 * time.Minute
	c := cacheWith([]*core.ClusterQueue{cq}, "a100")
	for i := range 15 {
		w := coretest.Admitted(coretest.GPUWorkload("run"+string(rune('a'+i)), 0, 0, 1, 1), "cq", "a100")
		w.AdmittedAt, w.MaxRuntime = coretest.Epoch, bound
		c.AddOrUpdateWorkload(w)
	}
	return c
}

// bounded is a one-GPU workload created age seconds after epoch that runs
// at most bound.
func bounded(name string, age int, bound time.Duration) *core.Workload {
	w := coretest.GPUWorkload(name, 0, age, 1, 1)
	w.MaxRuntime = bound
	return w
}

func cycleAt(c *testCache, now time.Time, pending ...*core.Workload) map[string]*Decision {
	s := c.Snapshot()
	s.SetNow(now)
	out := map[string]*Decision{}
	for _, d := range Schedule(s, map[string][]*core.Workload{"cq": pending}) {
		out[d.Workload.Name] = &d
	}
	return out
}

// TestStarvationGuardHoldsRoom: before its threshold a 16-GPU workload is
// passed by a younger 1-GPU one (Kueue's BestEffortFIFO); once it has
// waited 30 minutes, the free GPU is held for it, it is not parked (it must
// hold the room every cycle), and the 1-GPU one waits behind it, saying so.
func TestStarvationGuardHoldsRoom(t *testing.T) {
	c := starvationQueue(0)
	big := coretest.GPUWorkload("big", 0, 0, 16, 1)

	ds := cycleAt(c, coretest.Epoch.Add(10*time.Minute), big, coretest.GPUWorkload("small", 0, 60, 1, 1))
	if ds["small"].Admission == nil || !ds["big"].Park {
		t.Fatalf("before the threshold: small admitted %v, big parked %v", ds["small"].Admission != nil, ds["big"].Park)
	}

	ds = cycleAt(c, coretest.Epoch.Add(31*time.Minute), big, coretest.GPUWorkload("small", 0, 60, 1, 1))
	if d := ds["big"]; d.Pending.Kind != core.Reserved || d.Park {
		t.Fatalf("big: %v parked %v, want Reserved and not parked", d.Pending.Kind, d.Park)
	}
	if d := ds["small"]; d.Admission != nil || d.Pending.Kind != core.BehindReservation {
		t.Fatalf("small: admitted %v, pending %v", d.Admission != nil, d.Pending.Kind)
	}
	for name, want := range map[string]string{"big": "room held for it", "small": "declare no maximum execution time"} {
		if msg := ds[name].Message(); !strings.Contains(msg, want) {
			t.Errorf("%s's message %q lacks %q", name, msg, want)
		}
	}
}

// TestBackfillOnlyBoundedWorkloads: with the running workloads bounded to
// an hour, the held room is complete at epoch+1h; a workload bounded to end
// before then backfills, one ending after it or unbounded waits.
func TestBackfillOnlyBoundedWorkloads(t *testing.T) {
	c := starvationQueue(time.Hour)
	now := coretest.Epoch.Add(31 * time.Minute)
	for _, tc := range []struct {
		name  string
		bound time.Duration
		admit bool
	}{
		{"ends in time", 20 * time.Minute, true},
		{"ends exactly then", 29 * time.Minute, true},
		{"ends after", 40 * time.Minute, false},
		{"unbounded", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := cycleAt(c, now, coretest.GPUWorkload("big", 0, 0, 16, 1), bounded("small", 60, tc.bound))
			if got := ds["small"].Admission != nil; got != tc.admit {
				t.Fatalf("admitted %v, want %v: %s", got, tc.admit, ds["small"].Message())
			}
			if by := ds["big"].Pending.By; !by.Equal(coretest.Epoch.Add(time.Hour)) {
				t.Errorf("big's room complete by %s, want epoch+1h", by)
			}
			if !tc.admit && !strings.Contains(ds["small"].Message(), "ends by") {
				t.Errorf("message %q does not say by when a job must end", ds["small"].Message())
			}
		})
	}
}

// TestBackfillUsesTheQueueDefaultBound: the queue's maximum execution time
// bounds the workloads that declare none, the running and the backfilling.
func TestBackfillUsesTheQueueDefaultBound(t *testing.T) {
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 16))
	cq.StarvationAfter, cq.MaxRuntime = 30*time.Minute, time.Hour
	c := cacheWith([]*core.ClusterQueue{cq}, "a100")
	for i := range 15 {
		w := coretest.Admitted(coretest.GPUWorkload("run"+string(rune('a'+i)), 0, 0, 1, 1), "cq", "a100")
		w.AdmittedAt = coretest.Epoch.Add(30 * time.Minute)
		c.AddOrUpdateWorkload(w)
	}
	// The running ones end by epoch+90m; a default-bounded one admitted at
	// epoch+31m would end at epoch+91m: too late. One bounded to 30m fits.
	ds := cycleAt(c, coretest.Epoch.Add(31*time.Minute), coretest.GPUWorkload("big", 0, 0, 16, 1), coretest.GPUWorkload("default", 0, 60, 1, 1), bounded("short", 61, 30*time.Minute))
	if ds["default"].Admission != nil || ds["short"].Admission == nil {
		t.Fatalf("default admitted %v (want false), short admitted %v (want true)", ds["default"].Admission != nil, ds["short"].Admission != nil)
	}
}

// TestReservationHoldsOnlyWhatItNeeds: a starving workload short of CPU
// holds the 8 GPUs it asks of the 10 free; the other 2 stay usable by
// anyone, a third is not.
func TestReservationHoldsOnlyWhatItNeeds(t *testing.T) {
	cq := coretest.GPUQueue("cq", coretest.Quotas("a100", map[string]int64{"nvidia.com/gpu": 16, "cpu": 16}))
	cq.ResourceGroups[0].Resources = []string{"nvidia.com/gpu", "cpu"}
	cq.StarvationAfter = 30 * time.Minute
	c := cacheWith([]*core.ClusterQueue{cq}, "a100")
	c.AddOrUpdateWorkload(coretest.Admitted(coretest.Workload("run", 0, 0, 1, map[string]int64{"nvidia.com/gpu": 6, "cpu": 16}), "cq", "a100"))
	big := coretest.Workload("big", 0, 0, 1, map[string]int64{"nvidia.com/gpu": 8, "cpu": 4})
	ds := cycleAt(c, coretest.Epoch.Add(time.Hour), big, coretest.GPUWorkload("two", 0, 60, 1, 2), coretest.GPUWorkload("three", 0, 61, 1, 3))
	if ds["big"].Pending.Kind != core.Reserved {
		t.Fatalf("big: %v", ds["big"].Pending.Kind)
	}
	if ds["two"].Admission == nil || ds["three"].Admission != nil {
		t.Fatalf("two admitted %v (want true), three admitted %v (want false)", ds["two"].Admission != nil, ds["three"].Admission != nil)
	}
}

// TestReservationKeepsCohortBorrowersOut: room held in a queue of a cohort
// is not lent: a sibling's borrower waits.
func TestReservationKeepsCohortBorrowersOut(t *testing.T) {
	a, b := coretest.GPUQueue("a", coretest.GPUs("a100", 8)), coretest.GPUQueue("b", coretest.GPUs("a100", 0))
	a.Cohort, b.Cohort = "co", "co"
	a.StarvationAfter = 30 * time.Minute
	c := cacheWith([]*core.ClusterQueue{a, b}, "a100")
	run := coretest.Admitted(coretest.GPUWorkload("run", 0, 0, 4, 1), "a", "a100")
	c.AddOrUpdateWorkload(run)
	s := c.Snapshot()
	s.SetNow(coretest.Epoch.Add(time.Hour))
	borrower := coretest.GPUWorkload("borrower", 0, 60, 2, 1)
	borrower.Queue = "lqb"
	ds := Schedule(s, map[string][]*core.Workload{"a": {coretest.GPUWorkload("big", 0, 0, 8, 1)}, "b": {borrower}})
	for _, d := range ds {
		if d.Workload.Name == "borrower" && d.Admission != nil {
			t.Fatalf("a borrower took room held in a")
		}
	}
}

// TestNoReservationForWhatNeverFits: a workload larger than its queue
// could ever hold holds nothing.
func TestNoReservationForWhatNeverFits(t *testing.T) {
	c := starvationQueue(0)
	ds := cycleAt(c, coretest.Epoch.Add(time.Hour), coretest.GPUWorkload("huge", 0, 0, 17, 1), coretest.GPUWorkload("small", 0, 60, 1, 1))
	if ds["huge"].Pending.Kind == core.Reserved || ds["small"].Admission == nil {
		t.Fatalf("huge %v, small admitted %v", ds["huge"].Pending.Kind, ds["small"].Admission != nil)
	}
}

// TestReservationHoldsATopologyDomain: two racks with one free 8-GPU node
// each; a 16-GPU workload required in one rack fits the quota but no rack.
// Once it starves, the free node of the first rack is held for it: a small
// job goes to the other rack (without the guard it takes the first), and
// when the first rack's other node frees the big one fits there.
func TestReservationHoldsATopologyDomain(t *testing.T) {
	for _, guard := range []bool{false, true} {
		cq := tasQueue("cq", 32)
		if guard {
			cq.StarvationAfter = 30 * time.Minute
		}
		c := tasCache(t, 1, 2, 2, cq)
		c.SetNode(gpuNode("b1-r1-n2", 0))
		c.SetNode(gpuNode("b1-r2-n2", 0))
		big := tasWl("big", 0, 0, 2, 8, topology.Required, rackLabel)
		small := tasWl("small", 0, 60, 1, 8, topology.Unconstrained, "")
		small.PodSets[0].Topology = nil
		s := c.Snapshot()
		s.SetNow(coretest.Epoch.Add(time.Hour))
		ds := map[string]Decision{}
		for _, d := range Schedule(s, map[string][]*core.Workload{"cq": {big, small}}) {
			ds[d.Workload.Name] = d
		}
		d := ds["small"]
		if d.Admission == nil {
			t.Fatalf("guard %v: small not admitted: %s", guard, d.Message())
		}
		rack := d.Admission.PodSets[0].Placement.Assignment.Domains[0].Values[1]
		if want := map[bool]string{false: "b1-r1", true: "b1-r2"}[guard]; rack != want {
			t.Errorf("guard %v: small placed in %s, want %s", guard, rack, want)
		}
		if guard && ds["big"].Pending.Kind != core.Reserved {
			t.Errorf("big: %v", ds["big"].Pending.Kind)
		}
	}
}

// TestParkedUntilItStarves: a workload that does not fit in a guarded
// queue is parked until its threshold (RetryAfter), and the queues give it
// back at that time even if nothing is released, so the cycle then holds
// its room before later arrivals take it.
func TestParkedUntilItStarves(t *testing.T) {
	tr := NewTracker(Config{})
	tr.Cache.UpsertFlavor(&core.Flavor{Name: "a100"})
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 16))
	cq.StarvationAfter = 30 * time.Minute
	tr.UpsertClusterQueue(cq)
	tr.Queues.UpsertLocalQueue("ns", "lq", "cq")
	hold := coretest.Admitted(coretest.GPUWorkload("hold", 0, 0, 1, 8), "cq", "a100")
	tr.Apply(PhaseHolding, hold)
	big := coretest.GPUWorkload("big", 0, 0, 16, 1)
	tr.Apply(PhasePending, big)

	now := coretest.Epoch.Add(time.Minute)
	heads, seq := tr.Queues.Heads()
	s := tr.Snapshot()
	s.SetNow(now)
	d := Schedule(s, heads)[0]
	if !d.Park || d.RetryAfter != 29*time.Minute {
		t.Fatalf("parked %v, retry after %s; want parked for 29m", d.Park, d.RetryAfter)
	}
	tr.Queues.ParkUntil(d.Workload, seq, now.Add(d.RetryAfter))
	tr.Queues.UnparkDue(now.Add(20 * time.Minute))
	if heads, _ := tr.Queues.Heads(); len(heads) != 0 {
		t.Fatalf("unparked before its time: %v", heads)
	}
	tr.Queues.UnparkDue(now.Add(29 * time.Minute))
	heads, _ = tr.Queues.Heads()
	if len(heads["cq"]) != 1 {
		t.Fatalf("not unparked when it starves: %v", heads)
	}
	s = tr.Snapshot()
	s.SetNow(now.Add(29 * time.Minute))
	if d := Schedule(s, heads)[0]; d.Pending.Kind != core.Reserved || d.Park {
		t.Errorf("at its threshold: %v, parked %v", d.Pending.Kind, d.Park)
	}
}

// TestNoReservationForWhatOnlyBorrowingFits: queue a (nominal 8) has a
// starving 12-GPU workload that could run only on 4 GPUs its cohort lends,
// while sibling b keeps its own 8 in use. Holding a's 8 would idle them for
// as long as b keeps its quota, with nothing able to backfill; so nothing
// is held and a's 1-GPU workload runs.
func TestNoReservationForWhatOnlyBorrowingFits(t *testing.T) {
	a, b := inCohort(coretest.GPUQueue("a", coretest.GPUs("a100", 8)), "co"), inCohort(coretest.GPUQueue("b", coretest.GPUs("a100", 8)), "co")
	a.StarvationAfter = 30 * time.Minute
	c := cacheWith([]*core.ClusterQueue{a, b}, "a100")
	c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("b-run", 0, 0, 8, 1), "b", "a100"))
	s := c.Snapshot()
	s.SetNow(coretest.Epoch.Add(time.Hour))
	ds := map[string]*Decision{}
	for _, d := range Schedule(s, map[string][]*core.Workload{"a": {coretest.GPUWorkload("big", 0, 0, 12, 1), coretest.GPUWorkload("small", 0, 60, 1, 1)}}) {
		ds[d.Workload.Name] = &d
	}
	if ds["big"].Pending.Kind == core.Reserved || ds["small"].Admission == nil {
		t.Fatalf("big %v, small admitted %v: %s", ds["big"].Pending.Kind, ds["small"].Admission != nil, ds["small"].Message())
	}
}

// TestStarvingWorkloadReservesAfterItsShapeFailed: a younger 16-GPU
// workload of higher priority fails first in the cycle; the starving one
// of the same shape behind it still gets its room held, instead of being
// parked with the shape's failure (which would delay the guard).
func TestStarvingWorkloadReservesAfterItsShapeFailed(t *testing.T) {
	c := starvationQueue(0)
	ds := cycleAt(c, coretest.Epoch.Add(time.Hour), coretest.GPUWorkload("urgent", 10, 3000, 16, 1), coretest.GPUWorkload("starving", 0, 0, 16, 1))
	if d := ds["starving"]; d.Pending.Kind != core.Reserved || d.Park {
		t.Fatalf("starving: %v parked %v, want Reserved and not parked", d.Pending.Kind, d.Park)
	}
}
