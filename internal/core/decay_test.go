package core

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var gpuA100 = FlavorResource{Flavor: "a100", Resource: "nvidia.com/gpu"}

func TestDecayAlpha(t *testing.T) {
	c := DecayConfig{HalfLife: time.Hour}
	for _, tc := range []struct {
		elapsed time.Duration
		want    float64
	}{
		{0, 0}, {time.Hour, 0.5}, {2 * time.Hour, 0.75}, {-time.Minute, 0},
	} {
		if got := c.alpha(tc.elapsed); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("alpha(%s) = %v, want %v", tc.elapsed, got, tc.want)
		}
	}
	if got := (DecayConfig{}).alpha(time.Second); got != 1 {
		t.Errorf("no half-life keeps no past: alpha = %v", got)
	}
}

// TestDecayHalvesEachHalfLife: a queue that held 64 GPUs and released them
// weighs 32 after a half-life, 16 after two, whatever the sampling.
func TestDecayHalvesEachHalfLife(t *testing.T) {
	c := DecayConfig{HalfLife: time.Hour}
	for _, step := range []time.Duration{time.Hour, 5 * time.Minute, 37 * time.Second} {
		d := DecayedUsage{}.Sample(Usage{gpuA100: 64}, epoch, c)
		now := epoch
		for now.Before(epoch.Add(2 * time.Hour)) {
			now = now.Add(step)
			d = d.Sample(Usage{}, now, c)
		}
		want := 64 * math.Pow(0.5, now.Sub(epoch).Hours())
		if got := d.Usage[gpuA100]; math.Abs(got-want) > 1e-6 {
			t.Errorf("sampling every %s: %v after %s, want %v", step, got, now.Sub(epoch), want)
		}
	}
}

// TestDecayConvergesUnderConstantUsage (property): whatever it started
// from, the decayed usage of a queue holding a constant amount is within
// 2^-k of it after k half-lives, and never overshoots.
func TestDecayConvergesUnderConstantUsage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := DecayConfig{HalfLife: 30 * time.Minute}
	for range 200 {
		start, held := float64(r.IntN(1000)), int64(r.IntN(1000))
		d := DecayedUsage{Usage: map[FlavorResource]float64{gpuA100: start}, At: epoch}
		now := epoch
		for k := 1; k <= 8; k++ {
			for range 1 + r.IntN(6) {
				now = now.Add(time.Duration(r.IntN(10)+1) * time.Minute)
				d = d.Sample(Usage{gpuA100: held}, now, c)
				lo, hi := math.Min(start, float64(held)), math.Max(start, float64(held))
				if v := d.Usage[gpuA100]; v < lo-1e-6 || v > hi+1e-6 {
					t.Fatalf("overshoot: %v outside [%v, %v]", v, lo, hi)
				}
			}
			gap := math.Abs(d.Usage[gpuA100] - float64(held))
			bound := math.Abs(start-float64(held)) * math.Pow(0.5, now.Sub(epoch).Hours()/c.HalfLife.Hours())
			if gap > bound+1e-6 {
				t.Fatalf("after %s: gap %v above %v", now.Sub(epoch), gap, bound)
			}
		}
	}
}

func TestDecayFirstSampleIsTheCurrentUsage(t *testing.T) {
	d := DecayedUsage{}.Sample(Usage{gpuA100: 8}, epoch, DecayConfig{HalfLife: time.Hour})
	if d.Usage[gpuA100] != 8 || !d.At.Equal(epoch) {
		t.Errorf("first sample %+v", d)
	}
}

func TestDecayAddCountsAnAdmissionAtOnce(t *testing.T) {
	c := DecayConfig{HalfLife: time.Hour}
	d := DecayedUsage{}.Sample(Usage{}, epoch, c).Add(Usage{gpuA100: 10}, time.Hour, c)
	if got := d.Usage[gpuA100]; math.Abs(got-5) > 1e-9 {
		t.Errorf("an admission adds one sampling interval's worth: %v, want 5", got)
	}
}

// TestDecayedShare: weights make a GPU count more than a CPU; a queue that
// borrowed last night still has a share this morning; and without decay or
// weights it is the share of the current usage.
func TestDecayedShare(t *testing.T) {
	cpu := FlavorResource{Flavor: "a100", Resource: "cpu"}
	pool := Usage{gpuA100: 16, cpu: 160000}
	own := Usage{gpuA100: 8, cpu: 80000}
	c := DecayConfig{HalfLife: time.Hour, Weights: map[string]float64{"nvidia.com/gpu": 4}}
	d := DecayedUsage{Usage: map[FlavorResource]float64{gpuA100: 12, cpu: 120000}}
	// gpu: 4 borrowed of 16 is 250 thousandths, x4 = 1000; cpu: 40000 of 160000 = 250.
	if got := DecayedShare(d, own, pool, 1000, c); got != 1000 {
		t.Errorf("weighted share %d, want 1000", got)
	}
	if got := DecayedShare(DecayedUsage{Usage: map[FlavorResource]float64{gpuA100: 8}}, own, pool, 1000, c); got != 0 {
		t.Errorf("within its quota: share %d, want 0", got)
	}
	if got := DecayedShare(d, own, pool, 0, c); got != math.MaxInt64 {
		t.Errorf("weight 0 that borrows: %d", got)
	}
	parent := &node{subtree: pool}
	n := &node{parent: parent, weight: 1000, subtree: own, usage: Usage{gpuA100: 12, cpu: 120000}, work: Usage{gpuA100: 12, cpu: 120000}}
	current := DecayedUsage{}.Sample(n.usage, epoch, DecayConfig{})
	if got, want := DecayedShare(current, own, pool, 1000, DecayConfig{}), n.share(); got != want {
		t.Errorf("no decay, no weights: %d, want share() %d", got, want)
	}
}

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
				c.SetUsageDecay(DecayConfig{HalfLife: time.Hour}, 5*time.Minute)
			}
			now := epoch
			ran := backlog("a", 8, 0)
			for _, w := range ran {
				c.AddOrUpdateWorkload(admitted(w, "a", "a100"))
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
			got := admittedPerQueue(Schedule(s, map[string][]*Workload{"a": backlog("a-next", 8, 200), "b": backlog("b", 8, 300)}))
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
	c.SetUsageDecay(DecayConfig{HalfLife: 10 * time.Minute}, 10*time.Minute)
	c.SampleUsage(epoch)
	perQueue := map[string]int{}
	a, b := backlog("a", 8, 0), backlog("b", 8, 100)
	for range 8 {
		s := c.Snapshot()
		s.LimitAdmissions(1)
		ds := Schedule(s, map[string][]*Workload{"a": a, "b": b})
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
