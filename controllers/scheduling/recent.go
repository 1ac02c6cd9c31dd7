package scheduling

import (
	"sync"
	"time"
)

// RecentEvent is an admission, eviction or preemption the scheduler wrote,
// for the dashboard's recent activity.
type RecentEvent struct {
	Time         time.Time `json:"time"`
	Kind         string    `json:"kind"`
	Workload     string    `json:"workload"`
	ClusterQueue string    `json:"clusterQueue"`
	Message      string    `json:"message"`
}

// recentSize is how many events the dashboard can show.
const recentSize = 100

// recentLog keeps the last recentSize events, in memory only.
type recentLog struct {
	mu      sync.Mutex
	entries []RecentEvent
	next    int
}

func (l *recentLog) add(e RecentEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.entries) < recentSize {
		l.entries = append(l.entries, e)
		return
	}
	l.entries[l.next] = e
	l.next = (l.next + 1) % recentSize
}

// newestFirst returns a copy, the newest event first.
func (l *recentLog) newestFirst() []RecentEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]RecentEvent, 0, len(l.entries))
	for i := range l.entries {
		j := (l.next - 1 - i + 2*len(l.entries)) % len(l.entries)
		out = append(out, l.entries[j])
	}
	return out
}

// Recent is the scheduler's latest admissions, evictions and preemptions,
// newest first.
func (s *State) Recent() []RecentEvent { return s.recent.newestFirst() }

// Record adds an admission, eviction or preemption to the recent ones.
func (s *State) Record(e RecentEvent) { s.recent.add(e) }
