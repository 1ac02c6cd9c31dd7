package scheduler

import (
	"slices"
	"sort"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// trackerWorld is ClusterQueues a and b in cohort org and c alone, each fed
// by LocalQueue ns/lq-<name>, with one parked pending workload each
// (pa, pb, pc) and w holding quota in a, its pods not ready.
func trackerWorld(blockAdmission bool) (*Tracker, *core.Workload) {
	t := NewTracker(Config{BlockAdmission: blockAdmission})
	t.Cache.UpsertFlavor(&core.Flavor{Name: "a100"})
	for _, name := range []string{"a", "b", "c"} {
		cq := coretest.GPUQueue(name, coretest.GPUs("a100", 4))
		if name != "c" {
			cq = inCohort(cq, "org")
		}
		t.UpsertClusterQueue(cq)
		t.Queues.UpsertLocalQueue("ns", "lq-"+name, name)
	}
	inQueue := func(w *core.Workload, q string) *core.Workload { w.Queue = "lq-" + q; return w }
	w := coretest.Admitted(inQueue(coretest.GPUWorkload("w", 0, 0, 1, 2), "a"), "a", "a100")
	t.Apply(PhaseHolding, w)
	for _, name := range []string{"a", "b", "c"} {
		t.Apply(PhasePending, inQueue(coretest.GPUWorkload("p"+name, 0, 0, 1, 8), name))
	}
	heads, seq := t.Queues.Heads()
	for _, ws := range heads {
		for _, w := range ws {
			t.Queues.Park(w, seq)
		}
	}
	return t, w
}

// unparked lists the pending workloads that are tried next cycle.
func unparked(t *Tracker) []string {
	var out []string
	heads, _ := t.Queues.Heads()
	for _, ws := range heads {
		for _, w := range ws {
			out = append(out, w.Name)
		}
	}
	sort.Strings(out)
	return out
}

// TestTrackerApply: each phase puts a workload in its place, and a release
// of quota gives another chance to the queues that may use it: the cohort
// tree of the queue that held it, or everyone under blockAdmission.
func TestTrackerApply(t *testing.T) {
	for name, tc := range map[string]struct {
		blockAdmission bool
		phase          Phase
		assumed        bool
		wantUnparked   []string
		wantHolds      bool
		wantForgotten  bool
	}{
		"still holding":                     {phase: PhaseHolding, wantHolds: true},
		"gone: its cohort tree is unparked": {phase: PhaseGone, wantUnparked: []string{"pa", "pb"}, wantForgotten: true},
		"gone under blockAdmission":         {blockAdmission: true, phase: PhaseGone, wantUnparked: []string{"pa", "pb", "pc"}, wantForgotten: true},
		"requeued: queued again":            {phase: PhasePending, wantUnparked: []string{"pa", "pb", "w"}},
		"requeued with a backoff":           {phase: PhaseBackoff, wantUnparked: []string{"pa", "pb"}},
		"deactivated":                       {phase: PhaseInactive, wantUnparked: []string{"pa", "pb"}},
		"an older view of an assumed one":   {phase: PhasePending, assumed: true, wantHolds: true},
	} {
		t.Run(name, func(t *testing.T) {
			tr, w := trackerWorld(tc.blockAdmission)
			var forgotten []string
			tr.OnForget = func(key string) { forgotten = append(forgotten, key) }
			if tc.assumed {
				tr.Cache.DeleteWorkload(w.Key)
				if err := tr.Cache.Assume(w); err != nil {
					t.Fatal(err)
				}
			}
			next := *w
			if tc.phase != PhaseHolding {
				next.Admission = nil
			}
			tr.Apply(tc.phase, &next)
			if got := unparked(tr); !slices.Equal(got, tc.wantUnparked) {
				t.Errorf("tried next cycle: %v, want %v", got, tc.wantUnparked)
			}
			if got := tr.Cache.HoldsQuota(w.Key); got != tc.wantHolds {
				t.Errorf("holds quota = %v, want %v", got, tc.wantHolds)
			}
			if got := slices.Equal(forgotten, []string{w.Key}); got != tc.wantForgotten {
				t.Errorf("forgotten %v, want %v", forgotten, tc.wantForgotten)
			}
		})
	}
}

// A workload's pods becoming ready may unblock admission anywhere.
func TestTrackerPodsReadyUnparksAll(t *testing.T) {
	tr, w := trackerWorld(true)
	ready := *w
	ready.PodsReady = true
	tr.Apply(PhaseHolding, &ready)
	if got := unparked(tr); !slices.Equal(got, []string{"pa", "pb", "pc"}) {
		t.Errorf("tried next cycle: %v, want all", got)
	}
}

// A ClusterQueue that changes gives the queues of its cohort trees, old and
// new, another chance.
func TestTrackerClusterQueueChangeUnparksItsTrees(t *testing.T) {
	tr, _ := trackerWorld(false)
	tr.UpsertClusterQueue(inCohort(coretest.GPUQueue("c", coretest.GPUs("a100", 8)), "org"))
	if got := unparked(tr); !slices.Equal(got, []string{"pa", "pb", "pc"}) {
		t.Errorf("tried next cycle: %v, want all of org", got)
	}
}
