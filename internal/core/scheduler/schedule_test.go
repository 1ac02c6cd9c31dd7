package scheduler

import (
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

func TestSchedule(t *testing.T) {
	cases := map[string]struct {
		cqs          []*core.ClusterQueue
		heads        map[string][]*core.Workload
		wantAdmitted []string
		wantParked   []string
		wantMessage  map[string]string
	}{
		"admits everything that fits in one cycle": {
			cqs:          []*core.ClusterQueue{coretest.GPUQueue("cq", coretest.GPUs("a100", 8))},
			heads:        map[string][]*core.Workload{"cq": {coretest.GPUWorkload("a", 0, 1, 1, 2), coretest.GPUWorkload("b", 0, 2, 1, 2), coretest.GPUWorkload("c", 0, 3, 1, 2), coretest.GPUWorkload("d", 0, 4, 1, 2)}},
			wantAdmitted: []string{"a", "b", "c", "d"},
		},
		"higher priority first, then older": {
			cqs:          []*core.ClusterQueue{coretest.GPUQueue("cq", coretest.GPUs("a100", 4))},
			heads:        map[string][]*core.Workload{"cq": {coretest.GPUWorkload("old-low", 0, 1, 1, 4), coretest.GPUWorkload("new-high", 10, 5, 1, 4)}},
			wantAdmitted: []string{"new-high"},
			wantParked:   []string{"old-low"},
		},
		"best effort lets smaller workloads pass": {
			cqs:          []*core.ClusterQueue{coretest.GPUQueue("cq", coretest.GPUs("a100", 4))},
			heads:        map[string][]*core.Workload{"cq": {coretest.GPUWorkload("big", 0, 1, 1, 8), coretest.GPUWorkload("small", 0, 2, 1, 4)}},
			wantAdmitted: []string{"small"},
			wantParked:   []string{"big"},
		},
		"strict FIFO blocks behind its head": {
			cqs: []*core.ClusterQueue{func() *core.ClusterQueue {
				cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 4))
				cq.Strategy = core.StrictFIFO
				return cq
			}()},
			heads:       map[string][]*core.Workload{"cq": {coretest.GPUWorkload("big", 0, 1, 1, 8), coretest.GPUWorkload("small", 0, 2, 1, 4)}},
			wantMessage: map[string]string{"small": "blocked by workload ns/big at the head of StrictFIFO ClusterQueue cq"},
		},
		"queues are independent": {
			cqs: []*core.ClusterQueue{coretest.GPUQueue("a", coretest.GPUs("a100", 4)), coretest.GPUQueue("b", coretest.GPUs("a100", 4))},
			heads: map[string][]*core.Workload{
				"a": {coretest.GPUWorkload("a1", 0, 1, 1, 4), coretest.GPUWorkload("a2", 0, 2, 1, 4)},
				"b": {coretest.GPUWorkload("b1", 0, 3, 1, 4)},
			},
			wantAdmitted: []string{"a1", "b1"},
			wantParked:   []string{"a2"},
		},
		"stopped queue admits nothing": {
			cqs: []*core.ClusterQueue{func() *core.ClusterQueue {
				cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 4))
				cq.Stop = core.Hold
				return cq
			}()},
			heads:       map[string][]*core.Workload{"cq": {coretest.GPUWorkload("w", 0, 1, 1, 1)}},
			wantParked:  []string{"w"},
			wantMessage: map[string]string{"w": "ClusterQueue cq is inactive: ClusterQueue is stopped"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := cacheWith(tc.cqs, "a100")
			ds := Schedule(c.Snapshot(), tc.heads)
			got := names(ds, true)
			slices.Sort(got)
			if !slices.Equal(got, tc.wantAdmitted) {
				t.Errorf("admitted %v, want %v", got, tc.wantAdmitted)
			}
			var parked []string
			for _, d := range ds {
				if d.Park {
					parked = append(parked, d.Workload.Name)
				}
				if want, ok := tc.wantMessage[d.Workload.Name]; ok && !strings.Contains(d.Message(), want) {
					t.Errorf("%s: message %q, want %q", d.Workload.Name, d.Message(), want)
				}
			}
			slices.Sort(parked)
			if !slices.Equal(parked, tc.wantParked) {
				t.Errorf("parked %v, want %v", parked, tc.wantParked)
			}
		})
	}
}

// TestScheduleSeesCacheUsage: quota held by admitted workloads counts.
func TestScheduleSeesCacheUsage(t *testing.T) {
	c := cacheWith([]*core.ClusterQueue{coretest.GPUQueue("cq", coretest.GPUs("a100", 8))}, "a100")
	c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("running", 0, 0, 1, 6), "cq", "a100"))
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {coretest.GPUWorkload("w", 0, 1, 1, 4)}})
	if len(ds) != 1 || ds[0].Admission != nil {
		t.Fatalf("admitted on top of used quota: %+v", ds)
	}
	if !strings.Contains(ds[0].Message(), "4 requested, 2 available") {
		t.Errorf("message %q", ds[0].Message())
	}
}

// TestDrain: HoldAndDrain queues evict what they admitted; Hold ones keep it.
func TestDrain(t *testing.T) {
	cases := map[string]struct {
		cqStop    core.StopPolicy
		lqStop    core.StopPolicy
		wantEvict Eviction
	}{
		"running":             {},
		"cluster queue hold":  {cqStop: core.Hold},
		"cluster queue drain": {cqStop: core.HoldAndDrain, wantEvict: ClusterQueueStopped},
		"local queue hold":    {lqStop: core.Hold},
		"local queue drain":   {lqStop: core.HoldAndDrain, wantEvict: LocalQueueStopped},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 8))
			cq.Stop = tc.cqStop
			c := cacheWith([]*core.ClusterQueue{cq}, "a100")
			c.SetLocalQueueStop("ns/lq", tc.lqStop)
			c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("running", 0, 0, 1, 2), "cq", "a100"))
			ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {coretest.GPUWorkload("pending", 0, 1, 1, 2)}})
			var evicted Eviction
			admittedPending := false
			for _, d := range ds {
				if d.Evict != NoEviction {
					evicted = d.Evict
				}
				admittedPending = admittedPending || d.Admission != nil
			}
			if evicted != tc.wantEvict {
				t.Errorf("evicted %v, want %v", evicted, tc.wantEvict)
			}
			if stopped := tc.cqStop != core.Running || tc.lqStop != core.Running; admittedPending == stopped {
				t.Errorf("admitted new work = %v with stop policies %v/%v", admittedPending, tc.cqStop, tc.lqStop)
			}
		})
	}
}

// TestBlockAdmission: nothing is admitted while an admitted workload's pods
// are not ready; then admissions go on.
func TestBlockAdmission(t *testing.T) {
	c := cacheWith([]*core.ClusterQueue{coretest.GPUQueue("cq", coretest.GPUs("a100", 8))}, "a100")
	c.cfg.BlockAdmission = true
	starting := coretest.Admitted(coretest.GPUWorkload("starting", 0, 0, 1, 2), "cq", "a100")
	c.AddOrUpdateWorkload(starting)
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {coretest.GPUWorkload("next", 0, 1, 1, 2)}})
	if ds[0].Admission != nil || !strings.Contains(ds[0].Message(), "ns/starting to be ready") {
		t.Fatalf("admitted while another was not ready: %+v", ds[0])
	}
	ready := *starting
	ready.PodsReady = true
	c.AddOrUpdateWorkload(&ready)
	if ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {coretest.GPUWorkload("next", 0, 1, 1, 2)}}); ds[0].Admission == nil {
		t.Fatalf("not admitted once the first was ready: %s", ds[0].Message())
	}
}

// TestPreemptorHoldsTheRoomItMakes: a high-priority workload waits for the
// victim it is evicting; a lower-priority workload decided later in the same
// cycle must not take the quota that eviction frees (it would only become
// the next victim: eviction churn).
func TestPreemptorHoldsTheRoomItMakes(t *testing.T) {
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 8))
	cq.Preemption = core.Preemption{WithinClusterQueue: core.PreemptLowerPriority}
	for name, evicting := range map[string]bool{"victim to evict": false, "victim already evicting": true} {
		t.Run(name, func(t *testing.T) {
			c := cacheWith([]*core.ClusterQueue{cq}, "a100")
			running := coretest.Admitted(coretest.GPUWorkload("running", 0, 0, 1, 4), "cq", "a100")
			running.Evicting = evicting
			c.AddOrUpdateWorkload(running)
			c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("kept", 10, 0, 1, 2), "cq", "a100"))
			// 2 GPUs are free: the preemptor needs 6, the low one fits in 2.
			ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {coretest.GPUWorkload("high", 20, 1, 1, 6), coretest.GPUWorkload("low", 5, 2, 1, 2)}})
			if got := names(ds, true); len(got) != 0 {
				t.Fatalf("admitted %v while the preemptor waits for its room", got)
			}
		})
	}
}

// TestBorrowerKeepsItsPlaceInItsQueue: a high-priority workload that must
// borrow is decided after other queues' non-borrowers, but before the
// lower-priority workloads of its own queue, which would otherwise take its
// room within the nominal quota.
func TestBorrowerKeepsItsPlaceInItsQueue(t *testing.T) {
	a, b := coretest.GPUQueue("a", coretest.GPUs("a100", 4)), coretest.GPUQueue("b", coretest.GPUs("a100", 4))
	a.Cohort, b.Cohort = "c", "c"
	c := cacheWith([]*core.ClusterQueue{a, b}, "a100")
	// a has 4 GPUs of its own; b lends 2 of its 4.
	c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("b-running", 0, 0, 1, 2), "b", "a100"))
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"a": {coretest.GPUWorkload("high", 20, 1, 1, 6), coretest.GPUWorkload("low", 0, 2, 1, 1)}})
	if got := names(ds, true); !slices.Equal(got, []string{"high"}) {
		t.Fatalf("admitted %v, want the high-priority borrower alone", got)
	}
}
