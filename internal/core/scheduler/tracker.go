package scheduler

import (
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/queue"
	"github.com/musterhq/muster/internal/core/quota"
)

// Phase is where a workload is in its life, as far as scheduling cares;
// the controllers read it from the Workload's status.
type Phase int

const (
	// PhaseGone: finished, or deleted with no job left on its quota.
	PhaseGone Phase = iota
	// PhaseHolding: it holds quota (admitted, evicting, or deleted while
	// its job still runs).
	PhaseHolding
	// PhasePending: it waits in its queue.
	PhasePending
	// PhaseBackoff: requeued after an eviction, it may not queue before
	// its requeue time.
	PhaseBackoff
	// PhaseInactive: deactivated; out of the queues until reactivated.
	PhaseInactive
)

// Tracker keeps a Cache and Queues in line with the workloads' phases and
// decides who gets another chance when something changes: the retry and
// unpark policy the controllers, the scheduler's rebuild and the tests all
// share.
type Tracker struct {
	Cache  *quota.Cache
	Queues *queue.Queues
	// Config is the policy the cycles on them decide by.
	Config Config
	// OnForget, when set, hears of every workload dropped.
	OnForget func(key string)
}

// NewTracker returns a tracker over an empty cache and queues, deciding
// by cfg.
func NewTracker(cfg Config) *Tracker {
	return &Tracker{Cache: quota.NewCache(), Queues: queue.NewQueues(), Config: cfg}
}

// Snapshot is a cycle on a copy of the tracker's cache, under its policy.
func (t *Tracker) Snapshot() *Snapshot { return NewSnapshot(t.Cache, t.Config) }

// Apply puts a workload where its phase says it belongs. For PhaseGone,
// PhaseBackoff and PhaseInactive only its Key is read.
func (t *Tracker) Apply(phase Phase, w *core.Workload) {
	switch phase {
	case PhaseGone:
		t.Forget(w.Key)
	case PhaseHolding:
		if t.Cache.AddOrUpdateWorkload(w) && t.Config.BlockAdmission {
			t.Queues.Unpark() // admission waited for these pods
		}
		t.Queues.Delete(w.Key)
		if w.AwaitingPlacement {
			t.Queues.Notify() // its checks are Ready: a cycle places it
		}
	case PhaseBackoff, PhaseInactive:
		t.Queues.Forget(w.Key)
		t.release(t.Cache.ReleaseConfirmed(w.Key))
	case PhasePending:
		t.release(t.Cache.ReleaseConfirmed(w.Key))
		// A workload the scheduler just assumed is not queued again: the
		// API view predates the admission being written.
		if !t.Cache.HoldsQuota(w.Key) {
			t.Queues.AddOrUpdate(w)
		}
	}
}

// Forget drops a deleted or finished workload and frees its quota.
func (t *Tracker) Forget(key string) {
	t.Queues.Forget(key)
	t.release(t.Cache.DeleteWorkload(key))
	if t.OnForget != nil {
		t.OnForget(key)
	}
}

// UpsertClusterQueue applies a ClusterQueue. Its parked workloads and those
// of its cohort trees, before and after, get another chance: a spec change
// (joining a cohort, lending more) may let them fit.
func (t *Tracker) UpsertClusterQueue(cq *core.ClusterQueue) {
	before := t.Cache.CohortQueues(cq.Name)
	t.Cache.UpsertClusterQueue(cq)
	t.Queues.UpsertClusterQueue(cq.Name, cq.Strategy)
	t.Queues.Unpark(append(before, t.Cache.CohortQueues(cq.Name)...)...)
}

// release gives the workloads that wait for quota freed in a ClusterQueue
// another chance: those of every queue of its cohort tree, which may borrow
// it or were waiting for preemption victims there. Under blockAdmission,
// admission everywhere may have waited for it, so everyone does.
func (t *Tracker) release(clusterQueue string) {
	switch {
	case clusterQueue == "":
	case t.Config.BlockAdmission:
		t.Queues.Unpark()
	default:
		t.Queues.Unpark(t.Cache.CohortQueues(clusterQueue)...)
	}
}
