// Package workload owns the Workload status state machine: which
// conditions a workload has in each phase of its life (pending, quota
// reserved and admitted, evicted, requeued, finished, deactivated), the
// transitions between those phases, and the predicates the controllers and
// webhooks ask of a Workload.
//
// It is pure: transitions only change a *Workload in memory, given the time,
// and report whether anything changed. The controllers keep doing the API
// writes (assume, patch with an optimistic lock, undo on failure), so every
// transition is testable with plain tables. A test keeps the package free of
// API clients.
//
// The condition types and reasons themselves are API and live in
// apis/muster/v1beta1; this package decides which transition writes which.
package workload
