package harness

import (
	"strings"
	"testing"
	"time"
)

// The timeline counts arrivals by creation minute, admissions by admission
// minute, the backlog at each minute's end, and the waits of what arrived.
func TestTimeline(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	r := NewRecorder()
	for key, w := range map[string][2]float64{ // created, admitted (-1: never)
		"a": {0, 1}, "b": {10, 70}, "c": {65, 66}, "d": {100, -1},
	} {
		r.Created(key, "small", 1000, at(w[0]))
		if w[1] >= 0 {
			r.timeline(key).admitted = at(w[1])
		}
	}
	// a held 1 cpu from 1 s to 31 s and from 50 s to 80 s: 40 of the first
	// minute's seconds, 20 of the second's, of a 2-cpu capacity.
	r.timeline("a").holds = []span{{at(1), at(31)}, {at(50), at(80)}}
	rows := r.windows(start, 2000)
	want := []Window{
		{StartSeconds: 0, Created: 2, Admitted: 1, Backlog: 1},
		{StartSeconds: 60, Created: 2, Admitted: 2, Backlog: 1},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		got := rows[i]
		if got.StartSeconds != w.StartSeconds || got.Created != w.Created || got.Admitted != w.Admitted || got.Backlog != w.Backlog {
			t.Errorf("minute %d: %+v, want %+v", i+1, got, w)
		}
	}
	if p99 := rows[0].TimeToAdmission.P99; p99 != 60000 {
		t.Errorf("minute 1 p99 %v ms, want 60000 (b waited a minute)", p99)
	}
	if rows[0].QuotaHeld != 40.0/120 || rows[1].QuotaHeld != 20.0/120 {
		t.Errorf("quota held %v, %v; want 1/3 and 1/6", rows[0].QuotaHeld, rows[1].QuotaHeld)
	}
	if md := TimelineTable([]*Result{{Target: "muster", Mode: "unthrottled", Timeline: rows}}); !strings.Contains(md, "| 2 | 2 | 2 | 1 | 1000 / 1000 | 17% |") {
		t.Errorf("table:\n%s", md)
	}
}
