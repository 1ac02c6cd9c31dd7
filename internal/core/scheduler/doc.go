// Package scheduler decides: Schedule runs one admission cycle on a
// Snapshot (a quota snapshot, the queues' heads and the policy in Config)
// and returns one Decision per workload it reached — Admit, Repair, Evict,
// Preempt or Wait — which controllers apply (assume, then patch). The
// Tracker keeps a quota cache and the queues in line with workload phases
// and settles each applied decision, so that the manager's scheduler and the
// simulator share one copy of what happens between two cycles.
//
// Its files are the cycle's steps: schedule.go (the cycle and its order),
// assign.go (flavors), place.go (topology), preempt*.go (victims),
// reserve.go (room held for starving workloads), repair.go (failed nodes),
// partial.go (fewer pods), explain.go (one workload's search, for users).
package scheduler
