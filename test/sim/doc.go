// Package sim is a discrete-event simulator of Muster's scheduling core
// (internal/core) on a virtual clock: it replays trace files of job
// arrivals against ClusterQueues and cohorts exactly as the scheduler
// drives the core (heads, snapshot, Schedule, then admit, park or evict),
// so hours of traffic run in seconds and the same trace always gives the
// same numbers.
//
// It answers "what does this knob do to waits, shares and utilisation?"
// for the fairness features (usage-decayed fair sharing, minimum runtime,
// the starvation guard) without a cluster. The scenarios are in
// scenarios.go, the engine in engine.go, the plots in plot.go; the command
// test/tools/cmd/muster-sim (make sim) writes the PNGs (test/tools/simplot)
// and a markdown summary.
//
// What is not modelled: API latency and write budgets (every decision is
// applied at once), pods and nodes (jobs ask for GPUs of one flavor, with
// no topology), eviction time (a preempted job releases its quota at the
// instant it is chosen as a victim, and another cycle runs at once), and
// checkpoints (a preempted job is requeued, created anew as the controllers
// order a requeued workload, and runs its whole runtime again).
package sim
