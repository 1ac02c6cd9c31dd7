package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
	"github.com/musterhq/muster/internal/core/scheduler"
)

// GPU is the resource every simulated job asks for, in whole devices.
const GPU = "nvidia.com/gpu"

// Flavor is the one ResourceFlavor of the simulated pools.
const Flavor = "gpu"

// namespace holds every simulated workload and LocalQueue.
const namespace = "sim"

// Epoch is the wall time a trace's offset 0 stands for.
var Epoch = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// Setup is what one variant runs on: ClusterQueues (each fed by a LocalQueue
// of the same name), cohorts, and the cache's fair-sharing knobs.
type Setup struct {
	Queues  []*core.ClusterQueue
	Cohorts []*core.Cohort
	// FairSharing turns DRF fair sharing on (Cache.SetFairSharing).
	FairSharing bool
	// DecaySampling turns usage-decayed fair sharing on, sampling the usage
	// that often (Cache.SampleUsage) with Decay's half-life and weights;
	// zero compares current usage.
	Decay         quota.DecayConfig
	DecaySampling time.Duration
}

// Options are the engine's clock settings.
type Options struct {
	// Horizon is when the run stops; arrivals after it are not submitted.
	Horizon time.Duration
	// Record is how often the usage and pending counts are recorded.
	Record time.Duration
	// Tick is the longest gap between two scheduling cycles while anything
	// is pending, so that waits that end with time alone (a minimum
	// runtime, a starvation age) are seen.
	Tick time.Duration
	// MaxRepeats bounds the cycles run at one instant: after a cycle that
	// evicted victims, another runs at once so the preemptor is admitted
	// on the quota they freed.
	MaxRepeats int
	// Log, when set, hears of every decision of every cycle, before it is
	// applied: for following a core decision by hand.
	Log func(at time.Duration, d *scheduler.Decision)
}

// DefaultOptions records each minute and ticks every 10 s.
func DefaultOptions(horizon time.Duration) Options {
	return Options{Horizon: horizon, Record: time.Minute, Tick: 10 * time.Second, MaxRepeats: 8}
}

// jobPhase is where a simulated job is.
type jobPhase int

const (
	notArrived jobPhase = iota
	pending
	running
	finished
)

// jobState is the engine's view of one job of the trace.
type jobState struct {
	// idx is the job's index in engine.jobs, for its events.
	idx   int
	job   Job
	key   string
	phase jobPhase
	// admitted is the running workload as the cache holds it.
	admitted *core.Workload
	// attempt counts admissions; a completion event of an earlier one is
	// stale (the run was preempted).
	attempt    int
	startedAt  time.Duration
	firstAdmit time.Duration
	everRan    bool
	preempted  int
}

// engine replays a trace against a scheduler.Tracker on a virtual clock.
type engine struct {
	setup    Setup
	opts     Options
	tr       *scheduler.Tracker
	events   eventQueue
	now      time.Duration
	jobs     []*jobState
	byKey    map[string]*jobState
	queues   []string
	limits   map[string]int
	capacity int
	used     map[string]int
	nPending int
	// lastCycle is when the last cycle ran, for Options.Tick.
	lastCycle time.Duration
	wakes     map[time.Duration]bool
	res       *Result
}

// Run replays jobs on setup until opts.Horizon and returns what happened.
// It is deterministic: the same inputs give the same Result.
func Run(name string, setup Setup, jobs []Job, opts Options) (*Result, error) {
	e, err := newEngine(name, setup, jobs, opts)
	if err != nil {
		return nil, err
	}
	e.loop()
	e.finish()
	return e.res, nil
}

func newEngine(name string, setup Setup, jobs []Job, opts Options) (*engine, error) {
	e := &engine{setup: setup, opts: opts, tr: scheduler.NewTracker(scheduler.Config{FairSharing: setup.FairSharing}), byKey: map[string]*jobState{},
		limits: map[string]int{}, used: map[string]int{}, wakes: map[time.Duration]bool{}}
	e.tr.Cache.UpsertFlavor(&core.Flavor{Name: Flavor})
	if setup.DecaySampling > 0 {
		e.tr.Cache.SetUsageDecay(setup.Decay, setup.DecaySampling)
	}
	for _, co := range setup.Cohorts {
		e.tr.Cache.UpsertCohort(co)
		e.capacity += nominalGPUs(co.ResourceGroups)
	}
	for _, cq := range setup.Queues {
		if cq.NamespaceSelector == nil {
			c := *cq
			c.NamespaceSelector = everything{}
			cq = &c
		}
		e.tr.UpsertClusterQueue(cq)
		e.tr.Queues.UpsertLocalQueue(namespace, cq.Name, cq.Name)
		e.queues = append(e.queues, cq.Name)
		e.capacity += nominalGPUs(cq.ResourceGroups)
	}
	slices.Sort(e.queues)
	for _, q := range e.queues {
		e.limits[q] = e.queueLimit(q)
	}
	for i, j := range jobs {
		if !slices.Contains(e.queues, j.Queue) {
			return nil, fmt.Errorf("job %d: unknown queue %q (have %v)", i, j.Queue, e.queues)
		}
		if j.Arrival > opts.Horizon {
			continue
		}
		js := &jobState{idx: len(e.jobs), job: j, key: fmt.Sprintf("%s/%s-%05d", namespace, j.Queue, i)}
		e.jobs = append(e.jobs, js)
		e.byKey[js.key] = js
		e.events.push(event{at: j.Arrival, kind: evArrive, job: js.idx})
	}
	e.events.push(event{at: 0, kind: evRecord})
	if setup.DecaySampling > 0 {
		e.events.push(event{at: 0, kind: evDecaySample})
	}
	e.res = &Result{Name: name, Horizon: opts.Horizon, Capacity: e.capacity, Queues: e.queues, Limits: e.limits}
	return e, nil
}

// queueLimit is the most GPUs a queue may hold: its nominal quota plus
// what it may borrow (the whole pool when its borrowing is unlimited).
func (e *engine) queueLimit(name string) int {
	for _, cq := range e.setup.Queues {
		if cq.Name != name {
			continue
		}
		if cq.Cohort == "" {
			return nominalGPUs(cq.ResourceGroups)
		}
		limit := e.capacity
		for _, g := range cq.ResourceGroups {
			for _, f := range g.Flavors {
				if q, ok := f.Resources[GPU]; ok && q.BorrowingLimit != nil {
					limit = int(q.Nominal + *q.BorrowingLimit)
				}
			}
		}
		return limit
	}
	return 0
}

func nominalGPUs(groups []core.ResourceGroup) int {
	n := 0
	for _, g := range groups {
		for _, f := range g.Flavors {
			n += int(f.Resources[GPU].Nominal)
		}
	}
	return n
}

// at is the wall time of a virtual instant.
func at(d time.Duration) time.Time { return Epoch.Add(d) }

// loop advances the clock from event to event (or tick to tick while
// anything is pending) and runs the scheduling cycles, until the horizon.
func (e *engine) loop() {
	for {
		next, ok := e.events.next()
		if e.nPending > 0 {
			if tick := e.lastCycle + e.opts.Tick; !ok || tick < next {
				next, ok = tick, true
			}
		}
		if !ok || next > e.opts.Horizon {
			return
		}
		e.now = next
		record := false
		for _, ev := range e.events.popAt(next) {
			switch ev.kind {
			case evComplete:
				e.complete(ev)
			case evArrive:
				e.arrive(e.jobs[ev.job])
			case evWake:
				delete(e.wakes, ev.at)
			case evDecaySample:
				e.tr.Cache.SampleUsage(at(e.now))
				e.events.push(event{at: e.now + e.setup.DecaySampling, kind: evDecaySample})
			case evRecord:
				record = true
				e.events.push(event{at: e.now + e.opts.Record, kind: evRecord})
			}
		}
		e.cycles()
		if record {
			e.record()
		}
	}
}

// arrive submits a job's workload to its LocalQueue.
func (e *engine) arrive(js *jobState) {
	js.phase = pending
	e.nPending++
	e.submit(js)
}

// submit queues js's workload as pending, created now: a requeued job goes
// behind those that waited while it ran, as the controllers order it
// (queueOrderingTime).
func (e *engine) submit(js *jobState) {
	j := js.job
	w := &core.Workload{
		Key: js.key, Namespace: namespace, Name: js.key[len(namespace)+1:], Queue: j.Queue,
		Priority: j.Priority, Created: at(e.now), MaxRuntime: j.DeclaredMax,
		PodSets: []core.PodSet{{Name: "main", Count: int32(j.GPUs), Requests: core.Requests{GPU: 1}}},
	}
	e.tr.Apply(scheduler.PhasePending, w)
}

// complete ends a run whose time is up, unless it was preempted since.
func (e *engine) complete(ev event) {
	js := e.jobs[ev.job]
	if js.phase != running || js.attempt != ev.attempt {
		return
	}
	e.stopRun(js)
	js.phase = finished
	e.tr.Apply(scheduler.PhaseGone, js.admitted)
	js.admitted = nil
}

// stopRun closes js's current run interval and gives back its GPUs.
func (e *engine) stopRun(js *jobState) {
	e.res.Runs = append(e.res.Runs, Interval{Queue: js.job.Queue, GPUs: js.job.GPUs, Start: js.startedAt, End: e.now})
	e.used[js.job.Queue] -= js.job.GPUs
}

// cycles runs a scheduling cycle now, and again while one evicted victims
// (their quota is free at once in the simulation, so the preemptor gets
// it in the same instant).
func (e *engine) cycles() {
	e.lastCycle = e.now
	for range e.opts.MaxRepeats {
		e.res.Cycles++
		if !e.cycle() {
			return
		}
	}
}

// cycle is one scheduling cycle as controllers/scheduling runs it: heads,
// snapshot at now, Schedule, then apply each decision. It reports whether
// any victim was evicted.
func (e *engine) cycle() bool {
	e.tr.Queues.UnparkDue(at(e.now))
	heads, seq := e.tr.Queues.Heads()
	if len(heads) == 0 {
		return false
	}
	s := e.tr.Snapshot()
	s.SetNow(at(e.now))
	evicted := false
	for _, d := range scheduler.Schedule(s, heads) {
		if e.opts.Log != nil {
			e.opts.Log(e.now, &d)
		}
		switch d.Kind() {
		case scheduler.Evict:
			e.evict(e.byKey[d.Workload.Key], false)
			evicted = true
		case scheduler.Repair:
			e.res.Anomalies = append(e.res.Anomalies, fmt.Sprintf("%s: placement repair of %s (no topology here)", e.now, d.Workload.Key))
		case scheduler.Preempt:
			for _, v := range d.Victims {
				e.evict(e.byKey[v.Workload.Key], true)
			}
			evicted = true
		case scheduler.Admit:
			e.admit(d)
		}
		e.wake(e.tr.Settle(&d, seq, at(e.now)))
	}
	return evicted
}

// wake makes sure a cycle runs after d.
func (e *engine) wake(d time.Duration) {
	if d <= 0 {
		return
	}
	t := e.now + d
	if !e.wakes[t] {
		e.wakes[t] = true
		e.events.push(event{at: t, kind: evWake})
	}
}

// admit reserves the quota as the scheduler does (assume, then the API's
// confirmation) and starts the job's run.
func (e *engine) admit(d scheduler.Decision) {
	js := e.byKey[d.Workload.Key]
	if js == nil || js.phase != pending {
		e.res.Anomalies = append(e.res.Anomalies, fmt.Sprintf("%s: admitted %s, which is not pending", e.now, d.Workload.Key))
		return
	}
	w := *d.Workload
	w.Admission = d.Admission
	w.AdmittedAt = at(e.now)
	if err := e.tr.Cache.Assume(&w); err != nil {
		e.res.Anomalies = append(e.res.Anomalies, fmt.Sprintf("%s: %v", e.now, err))
		return
	}
	e.tr.Queues.Delete(w.Key)
	e.tr.Apply(scheduler.PhaseHolding, &w)
	if got := admittedGPUs(d.Admission); got != js.job.GPUs {
		e.res.Anomalies = append(e.res.Anomalies, fmt.Sprintf("%s: %s admitted with %d GPUs, asked %d", e.now, w.Key, got, js.job.GPUs))
	}
	js.admitted = &w
	js.phase = running
	e.nPending--
	js.attempt++
	js.startedAt = e.now
	if !js.everRan {
		js.everRan, js.firstAdmit = true, e.now
	}
	e.used[js.job.Queue] += js.job.GPUs
	e.events.push(event{at: e.now + js.job.Runtime, kind: evComplete, job: js.idx, attempt: js.attempt})
}

func admittedGPUs(a *core.Admission) int {
	n := 0
	for _, ps := range a.PodSets {
		n += int(ps.Usage[GPU])
	}
	return n
}

// evict stops a running job and requeues it; its work so far is lost (it
// starts over when admitted again). preempted counts it as a preemption.
func (e *engine) evict(js *jobState, preempted bool) {
	if js == nil || js.phase != running {
		return
	}
	if preempted {
		js.preempted++
		e.res.Preemptions++
		e.res.LostGPUHours += float64(js.job.GPUs) * (e.now - js.startedAt).Hours()
		e.res.VictimRuns = append(e.res.VictimRuns, e.now-js.startedAt)
	}
	e.stopRun(js)
	js.admitted = nil
	js.phase = pending
	e.nPending++
	e.submit(js)
}

// record samples each queue's usage and pending count, as the cache and
// the queues report them, and checks them against the engine's own count.
func (e *engine) record() {
	s := Sample{At: e.now, Used: make([]int, len(e.queues)), Pending: make([]int, len(e.queues))}
	for i, q := range e.queues {
		st := e.tr.Cache.ClusterQueueStatus(q)
		s.Used[i] = int(st.Usage[core.FlavorResource{Flavor: Flavor, Resource: GPU}])
		s.Pending[i] = e.tr.Queues.PendingInClusterQueue(q)
		s.UsedTotal += s.Used[i]
		if s.Used[i] != e.used[q] {
			e.res.Anomalies = append(e.res.Anomalies, fmt.Sprintf("%s: cache says %s uses %d GPUs, the running jobs %d", e.now, q, s.Used[i], e.used[q]))
		}
	}
	e.res.Samples = append(e.res.Samples, s)
}

// finish closes the runs still going at the horizon and fills in the jobs'
// outcomes.
func (e *engine) finish() {
	e.now = e.opts.Horizon
	for _, js := range e.jobs {
		if js.phase == running {
			e.res.Runs = append(e.res.Runs, Interval{Queue: js.job.Queue, GPUs: js.job.GPUs, Start: js.startedAt, End: e.now})
		}
		o := JobOutcome{Job: js.job, Key: js.key, Admitted: js.everRan, Preempted: js.preempted}
		switch js.phase {
		case notArrived:
			o.State = "not arrived" // a job lost by the engine: TestNoJobLost fails
		case pending:
			o.State = "pending"
		case running:
			o.State = "running"
		case finished:
			o.State = "finished"
		}
		if js.everRan {
			o.Wait = js.firstAdmit - js.job.Arrival
		} else {
			o.Wait = e.now - js.job.Arrival
		}
		e.res.Jobs = append(e.res.Jobs, o)
	}
	for _, q := range e.queues {
		e.res.CorePending += e.tr.Queues.PendingInClusterQueue(q)
		e.res.CoreHolding += e.tr.Cache.Reserving(q)
	}
}

// everything selects every namespace.
type everything struct{}

func (everything) Matches(map[string]string) bool { return true }
