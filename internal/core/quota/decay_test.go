package quota

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

var gpuA100 = core.FlavorResource{Flavor: "a100", Resource: "nvidia.com/gpu"}

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
		d := DecayedUsage{}.Sample(core.Usage{gpuA100: 64}, coretest.Epoch, c)
		now := coretest.Epoch
		for now.Before(coretest.Epoch.Add(2 * time.Hour)) {
			now = now.Add(step)
			d = d.Sample(core.Usage{}, now, c)
		}
		want := 64 * math.Pow(0.5, now.Sub(coretest.Epoch).Hours())
		if got := d.Usage[gpuA100]; math.Abs(got-want) > 1e-6 {
			t.Errorf("sampling every %s: %v after %s, want %v", step, got, now.Sub(coretest.Epoch), want)
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
		d := DecayedUsage{Usage: map[core.FlavorResource]float64{gpuA100: start}, At: coretest.Epoch}
		now := coretest.Epoch
		for k := 1; k <= 8; k++ {
			for range 1 + r.IntN(6) {
				now = now.Add(time.Duration(r.IntN(10)+1) * time.Minute)
				d = d.Sample(core.Usage{gpuA100: held}, now, c)
				lo, hi := math.Min(start, float64(held)), math.Max(start, float64(held))
				if v := d.Usage[gpuA100]; v < lo-1e-6 || v > hi+1e-6 {
					t.Fatalf("overshoot: %v outside [%v, %v]", v, lo, hi)
				}
			}
			gap := math.Abs(d.Usage[gpuA100] - float64(held))
			bound := math.Abs(start-float64(held)) * math.Pow(0.5, now.Sub(coretest.Epoch).Hours()/c.HalfLife.Hours())
			if gap > bound+1e-6 {
				t.Fatalf("after %s: gap %v above %v", now.Sub(coretest.Epoch), gap, bound)
			}
		}
	}
}

func TestDecayFirstSampleIsTheCurrentUsage(t *testing.T) {
	d := DecayedUsage{}.Sample(core.Usage{gpuA100: 8}, coretest.Epoch, DecayConfig{HalfLife: time.Hour})
	if d.Usage[gpuA100] != 8 || !d.At.Equal(coretest.Epoch) {
		t.Errorf("first sample %+v", d)
	}
}

func TestDecayAddCountsAnAdmissionAtOnce(t *testing.T) {
	c := DecayConfig{HalfLife: time.Hour}
	d := DecayedUsage{}.Sample(core.Usage{}, coretest.Epoch, c).Add(core.Usage{gpuA100: 10}, time.Hour, c)
	if got := d.Usage[gpuA100]; math.Abs(got-5) > 1e-9 {
		t.Errorf("an admission adds one sampling interval's worth: %v, want 5", got)
	}
}

// TestDecayedShare: weights make a GPU count more than a CPU; a queue that
// borrowed last night still has a share this morning; and without decay or
// weights it is the share of the current usage.
func TestDecayedShare(t *testing.T) {
	cpu := core.FlavorResource{Flavor: "a100", Resource: "cpu"}
	pool := core.Usage{gpuA100: 16, cpu: 160000}
	own := core.Usage{gpuA100: 8, cpu: 80000}
	c := DecayConfig{HalfLife: time.Hour, Weights: map[string]float64{"nvidia.com/gpu": 4}}
	d := DecayedUsage{Usage: map[core.FlavorResource]float64{gpuA100: 12, cpu: 120000}}
	// gpu: 4 borrowed of 16 is 250 thousandths, x4 = 1000; cpu: 40000 of 160000 = 250.
	if got := DecayedShare(d, own, pool, 1000, c); got != 1000 {
		t.Errorf("weighted share %d, want 1000", got)
	}
	if got := DecayedShare(DecayedUsage{Usage: map[core.FlavorResource]float64{gpuA100: 8}}, own, pool, 1000, c); got != 0 {
		t.Errorf("within its quota: share %d, want 0", got)
	}
	if got := DecayedShare(d, own, pool, 0, c); got != math.MaxInt64 {
		t.Errorf("weight 0 that borrows: %d", got)
	}
	parent := &TreeNode{Subtree: pool}
	n := &TreeNode{Parent: parent, weight: 1000, Subtree: own, Usage: core.Usage{gpuA100: 12, cpu: 120000}, Work: core.Usage{gpuA100: 12, cpu: 120000}}
	current := DecayedUsage{}.Sample(n.Usage, coretest.Epoch, DecayConfig{})
	if got, want := DecayedShare(current, own, pool, 1000, DecayConfig{}), n.Share(); got != want {
		t.Errorf("no decay, no weights: %d, want share() %d", got, want)
	}
}
