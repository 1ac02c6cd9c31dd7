package sim

import (
	"math"
	"slices"
	"time"
)

// Result is what one run recorded.
type Result struct {
	// Name is the variant's.
	Name    string
	Horizon time.Duration
	// Capacity is the pool's GPUs: the nominal quota of every queue and
	// cohort.
	Capacity int
	// Queues are the ClusterQueues, sorted; Samples' slices follow them.
	Queues []string
	// Limits is the most GPUs each queue may hold (nominal plus borrowing).
	Limits  map[string]int
	Samples []Sample
	// Runs are the jobs' runs, preempted ones included.
	Runs []Interval
	Jobs []JobOutcome
	// Preemptions counts the victims evicted; LostGPUHours is the work
	// they lost (GPUs x how long they had run).
	Preemptions  int
	LostGPUHours float64
	// VictimRuns is how long each victim had run when it was preempted.
	VictimRuns []time.Duration
	Cycles     int
	// CorePending and CoreHolding are the workloads the core's queues hold
	// pending and its cache holds quota for, at the end.
	CorePending, CoreHolding int
	// Anomalies are decisions the engine could not apply as given, or
	// disagreements between the core's usage and the running jobs.
	Anomalies []string
}

// Sample is the state at one recorded instant, per queue of Result.Queues.
type Sample struct {
	At        time.Duration
	Used      []int
	Pending   []int
	UsedTotal int
}

// Interval is one run of a job: it held GPUs in Queue from Start to End.
type Interval struct {
	Queue      string
	GPUs       int
	Start, End time.Duration
}

// JobOutcome is what became of one job of the trace.
type JobOutcome struct {
	Job
	Key string
	// State is pending, running or finished, at the horizon.
	State    string
	Admitted bool
	// Wait is from arrival to first admission; for a job never admitted,
	// until the horizon (a lower bound).
	Wait      time.Duration
	Preempted int
}

// GPUHours is what queue ran between from and to ("" for every queue).
func (r *Result) GPUHours(queue string, from, to time.Duration) float64 {
	total := 0.0
	for _, iv := range r.Runs {
		if queue != "" && iv.Queue != queue {
			continue
		}
		if s, e := max(iv.Start, from), min(iv.End, to); e > s {
			total += float64(iv.GPUs) * (e - s).Hours()
		}
	}
	return total
}

// Utilisation is the share of the pool's GPU-hours used between from and
// to, in [0, 1].
func (r *Result) Utilisation(from, to time.Duration) float64 {
	if to <= from || r.Capacity == 0 {
		return 0
	}
	return r.GPUHours("", from, to) / (float64(r.Capacity) * (to - from).Hours())
}

// Waits are the waits of the jobs that keep says to, sorted.
func (r *Result) Waits(keep func(JobOutcome) bool) []time.Duration {
	var out []time.Duration
	for _, j := range r.Jobs {
		if keep(j) {
			out = append(out, j.Wait)
		}
	}
	slices.Sort(out)
	return out
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of sorted
// values; 0 for none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// Count is how many jobs keep says to.
func (r *Result) Count(keep func(JobOutcome) bool) int {
	n := 0
	for _, j := range r.Jobs {
		if keep(j) {
			n++
		}
	}
	return n
}
