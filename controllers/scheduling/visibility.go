package scheduling

import "github.com/musterhq/muster/internal/core"

// What the visibility API reads of the scheduling state: the queues' order
// and the scheduler's latest pending reasons, in memory, without a request
// to the API server.

// Synced reports whether the core holds everything the API had: only then
// are the queues' positions complete. A replica that does not lead never
// rebuilds, so it never reports true.
func (s *State) Synced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// PendingReason is the scheduler's latest reason for a pending workload, as
// its QuotaReserved condition will say it; empty before the workload's
// first cycle.
func (s *State) PendingReason(key string) string {
	if s.reasonOf == nil {
		return ""
	}
	why, ok := s.reasonOf(key)
	if !ok {
		return ""
	}
	return why.Message()
}

// reason returns the latest reason recorded for a workload.
func (r *reasonWriter) reason(key string) (core.Pending, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	why, ok := r.latest[key]
	return why, ok
}
