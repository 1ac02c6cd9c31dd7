package scheduler

import (
	"time"

	"github.com/musterhq/muster/internal/core/quota"
)

// Config is the scheduler's policy: how it decides, whatever the cache
// holds. The manager sets it from its configuration; tests and the
// simulator from their setups.
type Config struct {
	// FairSharing orders admissions and preemptions by DRF shares.
	FairSharing bool
	// BlockAdmission admits nothing while an admitted workload's pods are
	// not all ready (waitForPodsReady.blockAdmission).
	BlockAdmission bool
	// PreemptionDelay is how long a workload that fits only by preempting
	// holds its room, waiting for it to free, before it evicts anyone.
	PreemptionDelay time.Duration
	// NodeFailureGrace is how long a node must stay NotReady before the
	// placements on it are repaired.
	NodeFailureGrace time.Duration
	// BalancedPlacement places pod sets that prefer a topology level
	// balanced first (topology.PodSet.Balanced).
	BalancedPlacement bool
}

// Snapshot is what one cycle decides on: a copy of the cache, the policy,
// and the cycle's time and limit. The cycle adds the usage of what it
// admits to the copy, so later decisions in the same cycle see it.
type Snapshot struct {
	*quota.Snapshot
	cfg Config
	// now is the cycle's time (see SetNow).
	now time.Time
	// admitLimit, when positive, is how many new admissions the cycle may
	// decide (see LimitAdmissions).
	admitLimit int
	// repairWait, after the cycle, is how long until the next NotReady
	// node's grace ends (see RepairWait).
	repairWait time.Duration
}

// NewSnapshot is a cycle on a copy of the cache under a policy, the copy
// holding what the policy needs.
func NewSnapshot(c *quota.Cache, cfg Config) *Snapshot {
	return &Snapshot{Snapshot: c.SnapshotWith(quota.SnapshotOptions{NotReady: cfg.BlockAdmission}), cfg: cfg}
}

// SetNow gives the cycle its time: the core reads no clock. Without it,
// workloads preempt as soon as they need to.
func (s *Snapshot) SetNow(t time.Time) { s.now = t }

// LimitAdmissions stops the cycle once it has decided n new admissions
// (n <= 0: no limit). The workloads it has not reached stay pending,
// undecided: neither parked nor given a reason. A controller whose writes
// are rate limited admits only what it can write now, so a higher-priority
// workload that arrives meanwhile is decided on next, not queued behind
// admissions decided long before they could be written.
func (s *Snapshot) LimitAdmissions(n int) { s.admitLimit = n }

// blockedByPodsReady names the admitted workload, first by key, whose pods
// are not all ready yet, when the policy admits nothing until they are.
func (s *Snapshot) blockedByPodsReady() (string, bool) {
	if !s.cfg.BlockAdmission || len(s.NotReady) == 0 {
		return "", false
	}
	return s.NotReady[0], true
}

// admissionsLeft reports whether the cycle may decide another admission,
// given those it has decided.
func (s *Snapshot) admissionsLeft(admitted int) bool {
	return s.admitLimit <= 0 || admitted < s.admitLimit
}
