package sim

import (
	"testing"
)

// TestQuotaNeverExceeded: at every recorded instant of every run, the pool
// holds no more GPUs than it has, no queue more than its nominal quota
// plus what it may borrow, and the core's usage is the running jobs' (the
// engine records any disagreement as an anomaly).
func TestQuotaNeverExceeded(t *testing.T) {
	for _, s := range Scenarios() {
		for _, r := range results(t, s.Name) {
			for _, a := range r.Anomalies {
				t.Errorf("%s/%s: %s", s.Name, r.Name, a)
			}
			for _, smp := range r.Samples {
				if smp.UsedTotal > r.Capacity {
					t.Fatalf("%s/%s at %s: %d GPUs used of %d", s.Name, r.Name, smp.At, smp.UsedTotal, r.Capacity)
				}
				for i, q := range r.Queues {
					if smp.Used[i] > r.Limits[q] {
						t.Fatalf("%s/%s at %s: %s uses %d GPUs, may hold %d", s.Name, r.Name, smp.At, q, smp.Used[i], r.Limits[q])
					}
				}
			}
		}
	}
}

// TestNoJobLost: every job of the trace ends the run finished, running or
// pending, and the core agrees: as many pending workloads in its queues
// and as many holding quota in its cache as the engine has jobs pending
// and running. A job the core dropped, or admitted twice, would break the
// count.
func TestNoJobLost(t *testing.T) {
	for _, s := range Scenarios() {
		submitted := 0
		for _, j := range s.Generate(s.Seed) {
			if j.Arrival <= s.Horizon {
				submitted++
			}
		}
		for _, r := range results(t, s.Name) {
			states := map[string]int{}
			for _, j := range r.Jobs {
				states[j.State]++
				if j.State != "pending" && !j.Admitted {
					t.Errorf("%s/%s: %s is %s but never admitted", s.Name, r.Name, j.Key, j.State)
				}
			}
			if len(r.Jobs) != submitted || states["pending"]+states["running"]+states["finished"] != submitted {
				t.Errorf("%s/%s: %d jobs submitted, outcomes %v", s.Name, r.Name, submitted, states)
			}
			if states["pending"] != r.CorePending || states["running"] != r.CoreHolding {
				t.Errorf("%s/%s: engine has %d pending and %d running, the core %d pending and %d holding quota",
					s.Name, r.Name, states["pending"], states["running"], r.CorePending, r.CoreHolding)
			}
		}
	}
}

// TestFinishedJobsRanTheirRuntime: a finished job's last run lasted its
// whole runtime; a preempted run does not count as the job's completion.
func TestFinishedJobsRanTheirRuntime(t *testing.T) {
	for _, s := range Scenarios() {
		for _, r := range results(t, s.Name) {
			ranFor := map[string]float64{}
			for _, iv := range r.Runs {
				ranFor[iv.Queue] += float64(iv.GPUs) * (iv.End - iv.Start).Hours()
			}
			needed := map[string]float64{}
			for _, j := range r.Jobs {
				if j.State == "finished" {
					needed[j.Queue] += float64(j.GPUs) * j.Runtime.Hours()
				}
			}
			for q, h := range needed {
				if ranFor[q]+1e-9 < h {
					t.Errorf("%s/%s: queue %s ran %.1f GPU-hours, its finished jobs alone need %.1f", s.Name, r.Name, q, ranFor[q], h)
				}
			}
		}
	}
}
