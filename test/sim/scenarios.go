package sim

import (
	"fmt"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
	"github.com/musterhq/muster/internal/core/scheduler"
)

// Scenario is a trace, how it is generated, and the knob settings it is
// replayed under.
type Scenario struct {
	Name string
	// Trace is the trace's file name in the traces directory.
	Trace string
	// Seed is what Generate makes the trace from.
	Seed     uint64
	Generate func(seed uint64) []Job
	Horizon  time.Duration
	Variants []Variant
}

// Variant is one setting of the scenario's knob.
type Variant struct {
	Name  string
	Setup Setup
}

// Scenarios are the three the plots and the summary show.
func Scenarios() []Scenario { return []Scenario{Decay(), Starvation(), MinRuntime()} }

// Options is the engine's clock for the scenario.
func (s Scenario) Options() Options { return DefaultOptions(s.Horizon) }

// Run replays jobs under each variant.
func (s Scenario) Run(jobs []Job) ([]*Result, error) {
	out := make([]*Result, 0, len(s.Variants))
	for _, v := range s.Variants {
		r, err := Run(v.Name, v.Setup, jobs, s.Options())
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// gpuQueue is a ClusterQueue of nominal GPUs of the one flavor, selecting
// every namespace, of weight 1.
func gpuQueue(name string, nominal int64) *core.ClusterQueue {
	return &core.ClusterQueue{Name: name, NamespaceSelector: everything{}, Weight: 1000,
		ResourceGroups: gpuGroups(nominal)}
}

func gpuGroups(nominal int64) []core.ResourceGroup {
	return []core.ResourceGroup{{Resources: []string{GPU}, Flavors: []core.FlavorQuotas{{
		Flavor: Flavor, Resources: map[string]core.ResourceQuota{GPU: {Nominal: nominal}}}}}}
}

// Decay's window: "day" starts submitting at DayStart, and the GPU-hours
// of the two teams are compared from then until DayEnd. The run goes on
// until decayHorizon, both teams submitting, to show where the shares
// settle.
const (
	DayStart     = 8 * time.Hour
	DayEnd       = 12 * time.Hour
	decayHorizon = 16 * time.Hour
)

// Decay is two teams sharing a 16-GPU cohort pool they borrow all of,
// fair sharing on. "night" submits a heavy stream of long jobs from hour 0;
// "day" joins at hour 8. With current usage the two are served alike as
// soon as their current shares meet; with usage decayed over a 4-hour
// half-life "day" is served first while "night"'s night still weighs.
// Neither queue reclaims (no preemption): the knob changes only who gets
// the GPUs that free. (TestReclaimDoesNotLoop runs the pool with reclaim.)
func Decay() Scenario {
	setup := func(decay bool) Setup {
		// The teams own no quota: the cohort holds the 16 GPUs, so every
		// admission borrows and the fair-sharing tournament alone decides
		// who gets a freed GPU (with nominal quotas, each team's own would
		// go to it first whatever its past).
		night, day := gpuQueue("night", 0), gpuQueue("day", 0)
		night.Cohort, day.Cohort = "pool", "pool"
		s := Setup{Queues: []*core.ClusterQueue{night, day},
			Cohorts:     []*core.Cohort{{Name: "pool", Weight: 1000, ResourceGroups: gpuGroups(16)}},
			FairSharing: true}
		if decay {
			s.Decay, s.DecaySampling = quota.DecayConfig{HalfLife: 4 * time.Hour}, 5*time.Minute
		}
		return s
	}
	return Scenario{Name: "decay", Trace: "decay.csv", Seed: 1, Generate: generateDecay, Horizon: decayHorizon,
		Variants: []Variant{
			{Name: "current usage", Setup: setup(false)},
			{Name: "decayed usage (half-life 4h)", Setup: setup(true)},
		}}
}

// generateDecay: "night" asks ~20 GPUs' worth from hour 0 to 16, "day"
// ~16 GPUs' worth from hour 8 to 16, both with a backlog once "day"
// starts, in jobs of 1 or 2 GPUs running about an hour (log-normal, 15 min
// to 3 h), so GPUs free often and the order decides who gets them (larger
// jobs would mostly measure fragmentation: a team's 4-GPU job waits while
// the other's 1-GPU jobs take the GPUs as they free one by one).
// Each team draws from its own stream (seed, seed+1).
func generateDecay(seed uint64) []Job {
	var jobs []Job
	team := func(r *rng, queue string, from, to, gap time.Duration) {
		for t := from + r.exp(gap); t < to; t += r.exp(gap) {
			jobs = append(jobs, Job{Arrival: t.Truncate(time.Second), Queue: queue, GPUs: pick(r, []int{1, 2}),
				Runtime: r.logNormal(time.Hour, 0.5, 15*time.Minute, 3*time.Hour).Truncate(time.Second)})
		}
	}
	// A job asks 1.5 GPUs for ~68 min on average: 1.7 GPU-hours.
	team(newRNG(seed), "night", 0, decayHorizon, 5*time.Minute)
	team(newRNG(seed+1), "day", DayStart, decayHorizon, 6*time.Minute+30*time.Second)
	return byArrival(jobs)
}

// StarvationAfter is the starvation scenario's guard setting.
const StarvationAfter = 30 * time.Minute

// Wide is the starvation scenario's large job size, the whole queue.
const Wide = 16

// Starvation is one 16-GPU ClusterQueue, BestEffortFIFO, under a
// stationary stream of 1-GPU jobs (half declaring a runtime bound) and a
// 16-GPU job every ~2 h: ~97% of capacity. Without a guard the 16-GPU jobs
// wait until the queue happens to drain, as every freed GPU goes to a
// 1-GPU job behind them; with StarvationAfter 30 min room is held for them
// (only bounded jobs that end in time backfill it). While any unbounded job
// runs, when the held room will be complete is unknown and nothing
// backfills; the third variant bounds every job with the queue's maximum
// execution time (no job here runs longer), so backfill can work.
//
// The guard's held room yields to a workload that has waited the queue's
// yield (by default DefaultStarvationYieldFactor thresholds, 5 h here):
// the "never yields" variant shows what the guard costs without that
// bound, and YieldSweep how the bound trades the two sizes' waits.
func Starvation() Scenario {
	return Scenario{Name: "starvation", Trace: "starvation.csv", Seed: 2, Generate: generateStarvation, Horizon: 24 * time.Hour,
		Variants: []Variant{
			{Name: "no guard", Setup: starvationSetup(0, 0, 0)},
			{Name: "guard 30m, never yields", Setup: starvationSetup(StarvationAfter, 0, 0)},
			{Name: "guard 30m (yields after 5h)", Setup: starvationSetup(StarvationAfter, scheduler.DefaultStarvationYield(StarvationAfter), 0)},
			{Name: "the same + queue bound 90m", Setup: starvationSetup(StarvationAfter, scheduler.DefaultStarvationYield(StarvationAfter), maxNarrowRuntime)},
		}}
}

// starvationSetup is the starvation scenario's queue: the guard after
// after (0: none), its room yielding after yield (0: never), its jobs
// bounded by bound (0: unbounded).
func starvationSetup(after, yield, bound time.Duration) Setup {
	q := gpuQueue("batch", Wide)
	q.Strategy = core.BestEffortFIFO
	q.StarvationAfter = after
	q.StarvationYieldAfter = yield
	q.MaxRuntime = bound
	return Setup{Queues: []*core.ClusterQueue{q}}
}

// YieldFactors are the yields YieldSweep tries, in thresholds (0: never).
var YieldFactors = []int{2, 3, 4, 6, 8, 9, 10, 12, 0}

// YieldPoint is the starvation trace replayed with one yield.
type YieldPoint struct {
	// Factor is the yield in thresholds (0: never yields).
	Factor int
	Row    StarvationRow
}

// YieldSweep replays the starvation trace with each of YieldFactors
// (unbounded jobs, the guard after StarvationAfter): the data the default
// yield was chosen from.
func YieldSweep(jobs []Job) ([]YieldPoint, error) {
	s := Starvation()
	var out []YieldPoint
	for _, k := range YieldFactors {
		r, err := Run(fmt.Sprintf("yield %d", k), starvationSetup(StarvationAfter, time.Duration(k)*StarvationAfter, 0), jobs, s.Options())
		if err != nil {
			return nil, err
		}
		out = append(out, YieldPoint{Factor: k, Row: StarvationNumbers([]*Result{r})[0]})
	}
	return out, nil
}

// Drained replays the starvation trace past its last arrival, until
// every job has been admitted (at most drainLimit more), with a variant's
// setup: whether the 16-GPU jobs never admitted by the horizon only
// arrived too late, or starve.
func Drained(jobs []Job, v Variant) (*Result, error) {
	opts := Starvation().Options()
	opts.Horizon += drainLimit
	return Run(v.Name, v.Setup, jobs, opts)
}

// drainLimit is how much longer Drained runs than the trace's horizon.
const drainLimit = 12 * time.Hour

// Starvation's 1-GPU runtimes are cut at maxNarrowRuntime, so the guard's
// effect has a bound: a held room is free at most this long after it is
// held. They arrive every narrowGap on average.
const (
	maxNarrowRuntime = 90 * time.Minute
	narrowGap        = 155 * time.Second
)

// generateStarvation: 1-GPU jobs every 2.6 min on average (Poisson), running
// ~30 min (log-normal, 5 to 90 min), ~11.5 GPUs' worth; half declare a
// bound of 1.5x their runtime rounded up to 5 min. A 16-GPU job every
// 2 h +- 15 min from hour 1, running 20-40 min, unbounded: ~4 GPUs' worth.
func generateStarvation(seed uint64) []Job {
	r := newRNG(seed)
	horizon := Starvation().Horizon
	var jobs []Job
	for t := r.exp(narrowGap); t < horizon; t += r.exp(narrowGap) {
		j := Job{Arrival: t.Truncate(time.Second), Queue: "batch", GPUs: 1,
			Runtime: r.logNormal(25*time.Minute, 0.6, 5*time.Minute, maxNarrowRuntime).Truncate(time.Second)}
		if r.chance(0.5) {
			j.DeclaredMax = (j.Runtime * 3 / 2).Truncate(5*time.Minute) + 5*time.Minute
		}
		jobs = append(jobs, j)
	}
	for t := time.Hour; t < horizon; t += 2 * time.Hour {
		jobs = append(jobs, Job{Arrival: (t + r.between(-15*time.Minute, 15*time.Minute)).Truncate(time.Second),
			Queue: "batch", GPUs: Wide, Runtime: r.between(20*time.Minute, 40*time.Minute).Truncate(time.Second)})
	}
	return byArrival(jobs)
}

// MinRuntimeSetting is the minimum-runtime scenario's protected variant.
const MinRuntimeSetting = 30 * time.Minute

// High is the minimum-runtime scenario's high priority; its long jobs run
// at 0.
const High = 100

// MinRuntime is one 16-GPU ClusterQueue that preempts lower priority
// within itself, kept full by long low-priority jobs and hit by bursts of
// short high-priority ones. Without a minimum runtime every burst evicts
// the most recently admitted long jobs (which may have just restarted
// after the previous burst); with 30 min a long job that has run less is
// spared, and the burst waits or takes an older one.
func MinRuntime() Scenario {
	setup := func(min time.Duration) Setup {
		q := gpuQueue("train", 16)
		q.Preemption = core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, MinRuntime: min}
		return Setup{Queues: []*core.ClusterQueue{q}}
	}
	return Scenario{Name: "minruntime", Trace: "minruntime.csv", Seed: 3, Generate: generateMinRuntime, Horizon: 24 * time.Hour,
		Variants: []Variant{
			{Name: "minRuntime 0", Setup: setup(0)},
			{Name: "minRuntime 30m", Setup: setup(MinRuntimeSetting)},
		}}
}

// generateMinRuntime: 4-GPU low-priority jobs, four at hour 0 and then
// every 43 min on average (Poisson), running ~2.5 h (log-normal, 1 to 6 h):
// ~15 GPUs' worth. Bursts of 1-3 high-priority jobs of 2 or 4 GPUs every
// 30-90 min, spread over 10 min, running 10-30 min: ~2 GPUs' worth.
func generateMinRuntime(seed uint64) []Job {
	r := newRNG(seed)
	horizon := MinRuntime().Horizon
	var jobs []Job
	long := func(t time.Duration) {
		jobs = append(jobs, Job{Arrival: t.Truncate(time.Second), Queue: "train", GPUs: 4,
			Runtime: r.logNormal(150*time.Minute, 0.4, time.Hour, 6*time.Hour).Truncate(time.Second)})
	}
	for range 4 {
		long(0)
	}
	for t := r.exp(43 * time.Minute); t < horizon; t += r.exp(43 * time.Minute) {
		long(t)
	}
	for t := r.between(30*time.Minute, 90*time.Minute); t < horizon; t += r.between(30*time.Minute, 90*time.Minute) {
		for range 1 + r.intn(3) {
			jobs = append(jobs, Job{Arrival: (t + r.between(0, 10*time.Minute)).Truncate(time.Second), Queue: "train",
				GPUs: pick(r, []int{2, 4}), Priority: High, Runtime: r.between(10*time.Minute, 30*time.Minute).Truncate(time.Second)})
		}
	}
	return byArrival(jobs)
}

func pick(r *rng, from []int) int { return from[r.intn(len(from))] }

// byArrival sorts jobs by arrival, keeping the generation order of ties,
// as ReadTrace returns them.
func byArrival(jobs []Job) []Job {
	out := make([]Job, len(jobs))
	copy(out, jobs)
	sortJobs(out)
	return out
}
