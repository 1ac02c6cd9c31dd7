package core

import (
	"slices"
	"strings"
	"testing"
)

func TestSchedule(t *testing.T) {
	cases := map[string]struct {
		cqs          []*ClusterQueue
		heads        map[string][]*Workload
		wantAdmitted []string
		wantParked   []string
		wantMessage  map[string]string
	}{
		"admits everything that fits in one cycle": {
			cqs:          []*ClusterQueue{gpuQueue("cq", gpus("a100", 8))},
			heads:        map[string][]*Workload{"cq": {gpuWl("a", 0, 1, 1, 2), gpuWl("b", 0, 2, 1, 2), gpuWl("c", 0, 3, 1, 2), gpuWl("d", 0, 4, 1, 2)}},
			wantAdmitted: []string{"a", "b", "c", "d"},
		},
		"higher priority first, then older": {
			cqs:          []*ClusterQueue{gpuQueue("cq", gpus("a100", 4))},
			heads:        map[string][]*Workload{"cq": {gpuWl("old-low", 0, 1, 1, 4), gpuWl("new-high", 10, 5, 1, 4)}},
			wantAdmitted: []string{"new-high"},
			wantParked:   []string{"old-low"},
		},
		"best effort lets smaller workloads pass": {
			cqs:          []*ClusterQueue{gpuQueue("cq", gpus("a100", 4))},
			heads:        map[string][]*Workload{"cq": {gpuWl("big", 0, 1, 1, 8), gpuWl("small", 0, 2, 1, 4)}},
			wantAdmitted: []string{"small"},
			wantParked:   []string{"big"},
		},
		"strict FIFO blocks behind its head": {
			cqs: []*ClusterQueue{func() *ClusterQueue {
				cq := gpuQueue("cq", gpus("a100", 4))
				cq.Strategy = StrictFIFO
				return cq
			}()},
			heads:       map[string][]*Workload{"cq": {gpuWl("big", 0, 1, 1, 8), gpuWl("small", 0, 2, 1, 4)}},
			wantMessage: map[string]string{"small": "blocked by workload ns/big at the head of StrictFIFO ClusterQueue cq"},
		},
		"queues are independent": {
			cqs: []*ClusterQueue{gpuQueue("a", gpus("a100", 4)), gpuQueue("b", gpus("a100", 4))},
			heads: map[string][]*Workload{
				"a": {gpuWl("a1", 0, 1, 1, 4), gpuWl("a2", 0, 2, 1, 4)},
				"b": {gpuWl("b1", 0, 3, 1, 4)},
			},
			wantAdmitted: []string{"a1", "b1"},
			wantParked:   []string{"a2"},
		},
		"stopped queue admits nothing": {
			cqs: []*ClusterQueue{func() *ClusterQueue {
				cq := gpuQueue("cq", gpus("a100", 4))
				cq.Stop = Hold
				return cq
			}()},
			heads:       map[string][]*Workload{"cq": {gpuWl("w", 0, 1, 1, 1)}},
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
	c := cacheWith([]*ClusterQueue{gpuQueue("cq", gpus("a100", 8))}, "a100")
	c.AddOrUpdateWorkload(admitted(gpuWl("running", 0, 0, 1, 6), "cq", "a100"))
	ds := Schedule(c.Snapshot(), map[string][]*Workload{"cq": {gpuWl("w", 0, 1, 1, 4)}})
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
		cqStop    StopPolicy
		lqStop    StopPolicy
		wantEvict Eviction
	}{
		"running":             {},
		"cluster queue hold":  {cqStop: Hold},
		"cluster queue drain": {cqStop: HoldAndDrain, wantEvict: ClusterQueueStopped},
		"local queue hold":    {lqStop: Hold},
		"local queue drain":   {lqStop: HoldAndDrain, wantEvict: LocalQueueStopped},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cq := gpuQueue("cq", gpus("a100", 8))
			cq.Stop = tc.cqStop
			c := cacheWith([]*ClusterQueue{cq}, "a100")
			c.SetLocalQueueStop("ns/lq", tc.lqStop)
			c.AddOrUpdateWorkload(admitted(gpuWl("running", 0, 0, 1, 2), "cq", "a100"))
			ds := Schedule(c.Snapshot(), map[string][]*Workload{"cq": {gpuWl("pending", 0, 1, 1, 2)}})
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
			if stopped := tc.cqStop != Running || tc.lqStop != Running; admittedPending == stopped {
				t.Errorf("admitted new work = %v with stop policies %v/%v", admittedPending, tc.cqStop, tc.lqStop)
			}
		})
	}
}

// TestBlockAdmission: nothing is admitted while an admitted workload's pods
// are not ready; then admissions go on.
func TestBlockAdmission(t *testing.T) {
	c := cacheWith([]*ClusterQueue{gpuQueue("cq", gpus("a100", 8))}, "a100")
	c.SetBlockAdmission(true)
	starting := admitted(gpuWl("starting", 0, 0, 1, 2), "cq", "a100")
	c.AddOrUpdateWorkload(starting)
	ds := Schedule(c.Snapshot(), map[string][]*Workload{"cq": {gpuWl("next", 0, 1, 1, 2)}})
	if ds[0].Admission != nil || !strings.Contains(ds[0].Message(), "ns/starting to be ready") {
		t.Fatalf("admitted while another was not ready: %+v", ds[0])
	}
	ready := *starting
	ready.PodsReady = true
	c.AddOrUpdateWorkload(&ready)
	if ds := Schedule(c.Snapshot(), map[string][]*Workload{"cq": {gpuWl("next", 0, 1, 1, 2)}}); ds[0].Admission == nil {
		t.Fatalf("not admitted once the first was ready: %s", ds[0].Message())
	}
}

// TestPreemptorHoldsTheRoomItMakes: a high-priority workload waits for the
// victim it is evicting; a lower-priority workload decided later in the same
// cycle must not take the quota that eviction frees (it would only become
// the next victim: eviction churn).
func TestPreemptorHoldsTheRoomItMakes(t *testing.T) {
	cq := gpuQueue("cq", gpus("a100", 8))
	cq.Preemption = Preemption{WithinClusterQueue: PreemptLowerPriority}
	for name, evicting := range map[string]bool{"victim to evict": false, "victim already evicting": true} {
		t.Run(name, func(t *testing.T) {
			c := cacheWith([]*ClusterQueue{cq}, "a100")
			running := admitted(gpuWl("running", 0, 0, 1, 4), "cq", "a100")
			running.Evicting = evicting
			c.AddOrUpdateWorkload(running)
			c.AddOrUpdateWorkload(admitted(gpuWl("kept", 10, 0, 1, 2), "cq", "a100"))
			// 2 GPUs are free: the preemptor needs 6, the low one fits in 2.
			ds := Schedule(c.Snapshot(), map[string][]*Workload{"cq": {gpuWl("high", 20, 1, 1, 6), gpuWl("low", 5, 2, 1, 2)}})
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
	a, b := gpuQueue("a", gpus("a100", 4)), gpuQueue("b", gpus("a100", 4))
	a.Cohort, b.Cohort = "c", "c"
	c := cacheWith([]*ClusterQueue{a, b}, "a100")
	// a has 4 GPUs of its own; b lends 2 of its 4.
	c.AddOrUpdateWorkload(admitted(gpuWl("b-running", 0, 0, 1, 2), "b", "a100"))
	ds := Schedule(c.Snapshot(), map[string][]*Workload{"a": {gpuWl("high", 20, 1, 1, 6), gpuWl("low", 0, 2, 1, 1)}})
	if got := names(ds, true); !slices.Equal(got, []string{"high"}) {
		t.Fatalf("admitted %v, want the high-priority borrower alone", got)
	}
}
