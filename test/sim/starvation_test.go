package sim

import (
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
)

// TestStarvationWithoutGuard: without the guard the 16-GPU jobs wait
// behind the stream of 1-GPU jobs, which BestEffortFIFO lets pass them:
// the baseline the guard is measured against. (It asserts nothing about
// the guard.)
func TestStarvationWithoutGuard(t *testing.T) {
	rows := StarvationNumbers(results(t, "starvation"))
	if wide := rows[0].Wide; wide.P50 < 2*time.Hour {
		t.Errorf("without the guard the 16-GPU jobs' p50 wait is %s: the trace does not starve them", wide.P50)
	}
}

// TestStarvationGuardAdmitsWideJobs is the guard's effect on the
// starvation scenario.
// With the guard the 16-GPU jobs get in: fewer are never admitted and
// their p99 wait is under half the unguarded one. The first one, which has
// no starving 1-GPU backlog ahead of it, waits no longer than the guard's
// threshold plus the longest 1-GPU runtime (room held then is complete
// once the jobs running at the time end) plus one tick.
func TestStarvationGuardAdmitsWideJobs(t *testing.T) {
	rs := results(t, "starvation")
	rows := StarvationNumbers(rs)
	without, with := rows[0].Wide, rows[1].Wide
	if with.NeverAdmitted >= without.NeverAdmitted || with.P99 > without.P99/2 {
		t.Errorf("16-GPU jobs: never admitted %d with the guard, %d without; p99 wait %s with, %s without",
			with.NeverAdmitted, without.NeverAdmitted, with.P99, without.P99)
	}
	bound := StarvationAfter + maxNarrowRuntime + scenario(t, "starvation").Options().Tick
	for _, j := range rs[1].Jobs {
		if j.GPUs == Wide {
			if j.Wait > bound {
				t.Errorf("first 16-GPU job %s waited %s, bound %s", j.Key, j.Wait, bound)
			}
			break
		}
	}
}

// TestParkedWorkloadNoticedWhenItStarves is the regression test of a gap
// the simulator found: a workload parked (BestEffortFIFO, it did not fit)
// was not tried again when it reached its queue's StarvationAfter, so no
// room was held for it until something else unparked the queue, and
// workloads arriving meanwhile took the room the guard should hold. Here a
// 16-GPU job waits behind an 8-GPU one; 1-GPU jobs arrive every 5 min, all
// running 3 h with no bound: the two arriving after the 16-GPU job starved
// (at 35 and 40 min) must wait. The core now parks it until it starves
// (Decision.RetryAfter, Queues.ParkUntil).
func TestParkedWorkloadNoticedWhenItStarves(t *testing.T) {
	q := gpuQueue("batch", 16)
	q.StarvationAfter = 30 * time.Minute
	wide := Job{Arrival: time.Minute, Queue: "batch", GPUs: 16, Runtime: 10 * time.Minute}
	jobs := []Job{{Arrival: 0, Queue: "batch", GPUs: 8, Runtime: 3 * time.Hour}, wide}
	for i := range 12 {
		jobs = append(jobs, Job{Arrival: time.Duration(5+5*i) * time.Minute, Queue: "batch", GPUs: 1, Runtime: 3 * time.Hour})
	}
	r, err := Run("parked", Setup{Queues: []*core.ClusterQueue{q}}, jobs, DefaultOptions(4*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	starved := wide.Arrival + q.StarvationAfter
	for _, j := range r.Jobs {
		if j.GPUs == 1 && j.Arrival > starved && j.Wait == 0 {
			t.Errorf("%s arrived at %s, after the 16-GPU job starved (%s), and was admitted at once", j.Key, j.Arrival, starved)
		}
	}
}
