package scheduler

import (
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/quota"
)

// TestDecayedTournament: two queues share an 8-GPU pool; "a" ran 8 GPUs
// for the last three hours and just finished. With current usage both are
// at 0 and take turns; with decayed usage "b", which ran nothing, is
// served first.
func TestDecayedTournament(t *testing.T) {
	for _, tc := range []struct {
		name         string
		decay        bool
		wantA, wantB int
	}{
		{name: "current usage: both at 0, they alternate", decay: false, wantA: 2, wantB: 2},
		{name: "decayed usage: b, which ran nothing, first", decay: true, wantA: 0, wantB: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sharedPool(true, 1000, 1000)
			if tc.decay {
				c.SetUsageDecay(quota.DecayConfig{HalfLife: time.Hour}, 5*time.Minute)
			}
			now := coretest.Epoch
			ran := backlog("a", 8, 0)
			for _, w := range ran {
				c.AddOrUpdateWorkload(coretest.Admitted(w, "a", "a100"))
			}
			for range 36 { // three hours of 8 GPUs, sampled every 5 minutes
				now = now.Add(5 * time.Minute)
				c.SampleUsage(now)
			}
			for _, w := range ran {
				c.DeleteWorkload(w.Key) // a's jobs finished
			}
			c.SampleUsage(now.Add(time.Minute))
			s := c.Snapshot()
			s.LimitAdmissions(4)
			got := admittedPerQueue(Schedule(s, map[string][]*core.Workload{"a": backlog("a-next", 8, 200), "b": backlog("b", 8, 300)}))
			if got["a"] != tc.wantA || got["b"] != tc.wantB {
				t.Errorf("admitted a=%d b=%d, want a=%d b=%d", got["a"], got["b"], tc.wantA, tc.wantB)
			}
		})
	}
}

// TestDecayCountsAdmissionsBetweenSamples: admissions the scheduler
// assumed since the last sample weigh at once, across cycles, so one
// cycle's winner does not win every cycle until the next sample.
func TestDecayCountsAdmissionsBetweenSamples(t *testing.T) {
	c := sharedPool(true, 1000, 1000)
	c.SetUsageDecay(quota.DecayConfig{HalfLife: 10 * time.Minute}, 10*time.Minute)
	c.SampleUsage(coretest.Epoch)
	perQueue := map[string]int{}
	a, b := backlog("a", 8, 0), backlog("b", 8, 100)
	for range 8 {
		s := c.Snapshot()
		s.LimitAdmissions(1)
		ds := Schedule(s, map[string][]*core.Workload{"a": a, "b": b})
		if len(ds) == 0 || ds[0].Admission == nil {
			t.Fatal("nothing admitted")
		}
		d := ds[0]
		w := *d.Workload
		w.Admission = d.Admission
		if err := c.Assume(&w); err != nil {
			t.Fatal(err)
		}
		q := d.Admission.ClusterQueue
		perQueue[q]++
		if q == "a" {
			a = a[1:]
		} else {
			b = b[1:]
		}
	}
	if perQueue["a"] != 4 || perQueue["b"] != 4 {
		t.Errorf("one admission a cycle: a=%d b=%d, want 4 each (without counting assumed admissions, a's older backlog would win all 8)", perQueue["a"], perQueue["b"])
	}
	if d, ok := c.DecayedUsageOf("a", false); !ok || d.Usage[gpuA100] <= 0 {
		t.Errorf("a's decayed usage counts its admissions: %+v", d)
	}
}
