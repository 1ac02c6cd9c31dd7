package sim

import (
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
)

// reclaimPool is the decay scenario's pool with both teams reclaiming
// their nominal quota (ReclaimWithinCohort Any), and a trace where "night"
// has run all 16 GPUs for 8 h with 8 more jobs pending when "day" submits
// 12: "day" should take back its 8 GPUs (7 preemptions: one GPU frees at
// hour 8) and the rest run as GPUs free.
func reclaimPool(decay bool) (Setup, []Job) {
	v := Decay().Variants[0]
	if decay {
		v = Decay().Variants[1]
	}
	for _, q := range v.Setup.Queues {
		q.Preemption.ReclaimWithinCohort = core.PreemptAny
	}
	var jobs []Job
	for i := range 16 {
		jobs = append(jobs, Job{Queue: "night", GPUs: 1, Runtime: 8*time.Hour + time.Duration(i)*10*time.Minute})
	}
	for range 8 {
		jobs = append(jobs, Job{Arrival: 7 * time.Hour, Queue: "night", GPUs: 1, Runtime: 4 * time.Hour})
	}
	for range 12 {
		jobs = append(jobs, Job{Arrival: 8 * time.Hour, Queue: "day", GPUs: 1, Runtime: 4 * time.Hour})
	}
	return v.Setup, jobs
}

// TestReclaimDoesNotLoop is the regression test of a loop the simulator
// found in the fair tournament under reclaim. With current usage: once
// "day" was one GPU short of its nominal 8 and "night" back at its nominal
// 8, both shares were 0 and the tie went to the older workload, "night"'s,
// which then borrowed the GPU "day" had just reclaimed; "day" reclaimed it
// again, until "night" ran out of pending jobs (19 preemptions where 7
// do). With decayed usage "day"'s decayed share stayed lowest, so "day"
// won the tournament even by borrowing, while reclaim compares current
// usage and "night", below its nominal, took the GPU back: every cycle,
// for hours (8,175 preemptions in 3 h). The tournament now decides
// workloads within nominal quota before borrowers, as the priority path
// always did.
func TestReclaimDoesNotLoop(t *testing.T) {
	for _, decay := range []bool{false, true} {
		setup, jobs := reclaimPool(decay)
		r, err := Run("reclaim", setup, jobs, DefaultOptions(11*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if r.Preemptions > 8 {
			t.Errorf("decay %v: %d preemptions, %.1f GPU-hours lost; want at most 8", decay, r.Preemptions, r.LostGPUHours)
		}
	}
}
