// Package admission is where decisions are written: the leader's loop that
// runs the core's cycles (internal/core/scheduler) over the state the
// scheduling controllers keep, and applies each decision — assume in the
// cache, then patch the Workload's status, undoing the assumption when the
// write fails. Its writers pace themselves by the manager's measured write
// latency (writequeue.go) and keep pending reasons off the cycle's path
// (reasons.go).
package admission
