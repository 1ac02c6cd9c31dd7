package scheduling

import (
	"fmt"
	"testing"
)

// TestRecentLogKeepsTheNewest: the dashboard's activity keeps the last
// recentSize events, newest first, across the ring's wrap.
func TestRecentLogKeepsTheNewest(t *testing.T) {
	var l recentLog
	if got := l.newestFirst(); len(got) != 0 {
		t.Fatalf("empty log: %v", got)
	}
	for i := range recentSize + 7 {
		l.add(RecentEvent{Workload: fmt.Sprint(i)})
	}
	got := l.newestFirst()
	if len(got) != recentSize {
		t.Fatalf("kept %d, want %d", len(got), recentSize)
	}
	if got[0].Workload != fmt.Sprint(recentSize+6) || got[recentSize-1].Workload != "7" {
		t.Errorf("newest %s, oldest %s", got[0].Workload, got[recentSize-1].Workload)
	}
}
