package sim

import (
	"math"
	"math/rand/v2"
	"time"
)

// rng draws the traces' random numbers from PCG's raw 64-bit outputs only,
// with the conversions written out here: PCG's sequence is fixed by its
// definition, so a seed makes the same trace on any Go release (the
// distributions of math/rand/v2 promise no such thing).
type rng struct{ src *rand.PCG }

func newRNG(seed uint64) *rng { return &rng{src: rand.NewPCG(seed, 0x6d75737465722d73)} }

// float is uniform in [0, 1).
func (r *rng) float() float64 { return float64(r.src.Uint64()>>11) / (1 << 53) }

// intn is uniform in [0, n).
func (r *rng) intn(n int) int { return int(r.src.Uint64() % uint64(n)) }

// between is uniform in [lo, hi].
func (r *rng) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.float()*float64(hi-lo))
}

// exp is exponential with the given mean: the gap between Poisson arrivals.
func (r *rng) exp(mean time.Duration) time.Duration {
	return time.Duration(-math.Log(1-r.float()) * float64(mean))
}

// chance is true with probability p.
func (r *rng) chance(p float64) bool { return r.float() < p }

// logNormal has the given median, with sigma the spread of its logarithm,
// cut to [lo, hi]: job runtimes, mostly near the median with a long tail.
func (r *rng) logNormal(median time.Duration, sigma float64, lo, hi time.Duration) time.Duration {
	// Box-Muller from two uniforms.
	u1, u2 := 1-r.float(), r.float()
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	d := time.Duration(float64(median) * math.Exp(sigma*z))
	return min(max(d, lo), hi)
}
