package harness

import (
	"math"
	"slices"
	"time"
)

// Distribution summarises durations in milliseconds.
type Distribution struct {
	Count int     `json:"count"`
	Mean  float64 `json:"meanMs"`
	P50   float64 `json:"p50Ms"`
	P90   float64 `json:"p90Ms"`
	P99   float64 `json:"p99Ms"`
	Max   float64 `json:"maxMs"`
}

// Summarize sorts samples (ms) in place and summarises them; percentiles
// are nearest-rank.
func Summarize(samples []float64) Distribution {
	if len(samples) == 0 {
		return Distribution{}
	}
	slices.Sort(samples)
	sum := 0.0
	for _, s := range samples {
		sum += s
	}
	return Distribution{
		Count: len(samples), Mean: sum / float64(len(samples)),
		P50: percentile(samples, 50), P90: percentile(samples, 90), P99: percentile(samples, 99),
		Max: samples[len(samples)-1],
	}
}

func percentile(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// peakRate is the most events in any window, per second.
func peakRate(times []time.Time, window time.Duration) float64 {
	ts := slices.Clone(times)
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	best, lo := 0, 0
	for hi := range ts {
		for ts[hi].Sub(ts[lo]) >= window {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return float64(best) / window.Seconds()
}

// Spread is a mean with its half range over repetitions.
type Spread struct {
	Mean float64 `json:"mean"`
	// Half is half of max-min: the runs lie within Mean±Half (roughly).
	Half float64 `json:"half"`
	N    int     `json:"n"`
}

// SpreadOf summarises repetitions.
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	lo, hi, sum := xs[0], xs[0], 0.0
	for _, x := range xs {
		lo, hi, sum = min(lo, x), max(hi, x), sum+x
	}
	return Spread{Mean: sum / float64(len(xs)), Half: (hi - lo) / 2, N: len(xs)}
}
