// Package core is the vocabulary of Muster's pure scheduling core: the
// small model controllers translate API objects into (model.go, nodes.go)
// and the reasons a workload waits (Pending, NoFit), formatted at the edge.
// Its rooms build on it, each importing no API client and no API types:
//
//   - quota: what is held and free — the cohort tree, the cache of
//     admitted workloads, nodes and pods, and its per-cycle Snapshot.
//   - queue: who waits, in which order — the pending queues, their
//     parking, and the LocalQueues' turns under admission fair sharing.
//   - scheduler: the decisions — one cycle over a quota snapshot and the
//     queues' heads (flavor assignment, topology placement, preemption,
//     reservation, repair, partial admission) under a policy (Config), and
//     the Tracker through which controllers and the simulator feed
//     workload phases and settle each decision.
//
// That keeps every decision testable with plain tables, fuzzing and
// benchmarks; coretest holds the builders the rooms' tests share.
//
// Quantities are exact int64s in each resource's own unit (1 GPU = 1, 1 byte
// = 1), except cpu, which is counted in milli-cores so fractional CPUs stay
// exact (MilliUnits); petabytes of memory fit without overflow.
package core
