// Package core is Muster's pure scheduling core: quota arithmetic, pending
// queues, flavor assignment and the admission cycle. It imports no API client
// and no API types: controllers translate objects into the small model of
// model.go, feed it events (a workload's phase goes through Tracker, which
// also decides who is retried when), and apply the decisions it returns,
// whose reasons are structure (Pending, Eviction) formatted at the edge.
// That keeps every decision testable with plain tables, fuzzing and
// benchmarks.
//
// Quantities are exact int64s in each resource's own unit (1 GPU = 1, 1 byte
// = 1), except cpu, which is counted in milli-cores so fractional CPUs stay
// exact (MilliUnits); petabytes of memory fit without overflow.
package core
