package harness

import (
	"fmt"
	"strings"
	"time"
)

// timelineWindow is the width of a row of the timeline.
const timelineWindow = time.Minute

// Window is one timelineWindow of a run, from the first creation: what
// arrived, what was admitted, how long what arrived in it waited, and the
// backlog at its end. A steady mix keeps up when admissions match arrivals
// and neither the waits nor the backlog grow from row to row.
type Window struct {
	StartSeconds float64 `json:"startSeconds"`
	Created      int     `json:"created"`
	// Admitted counts first admissions in the window.
	Admitted int `json:"admitted"`
	// Backlog is the workloads created but not yet admitted at its end.
	Backlog int `json:"backlog"`
	// TimeToAdmission is that of the workloads created in the window.
	TimeToAdmission Distribution `json:"timeToAdmission"`
	// QuotaHeld is the share of the mix's nominal quota that admitted
	// workloads held over the window, from their admission to their
	// release as the harness saw them. Near or above 1 (borrowing counts
	// against the same total), a window was bound by the quota coming
	// back, not by how fast the controller admits.
	QuotaHeld float64 `json:"quotaHeld"`
}

// windows cuts the timelines into rows, quotaHeld against capacity
// millicores; the caller holds r.mu.
func (r *Recorder) windows(start time.Time, capacity int64) []Window {
	var last time.Time
	for _, t := range r.workloads {
		last = latest(last, t.created, t.admitted)
	}
	n := int(last.Sub(start)/timelineWindow) + 1
	if last.IsZero() || n <= 0 {
		return nil
	}
	rows := make([]Window, n)
	waits := make([][]float64, n)
	index := func(at time.Time) int { return min(max(int(at.Sub(start)/timelineWindow), 0), n-1) }
	for _, t := range r.workloads {
		c := index(t.created)
		rows[c].Created++
		end := n // not admitted: in every backlog from its creation on
		if !t.admitted.IsZero() {
			end = index(t.admitted)
			rows[end].Admitted++
			waits[c] = append(waits[c], float64(t.admitted.Sub(t.created).Microseconds())/1000)
		}
		for i := c; i < end; i++ {
			rows[i].Backlog++
		}
		for _, h := range t.holds {
			addHeld(rows, start, h, t.milliCPU)
		}
	}
	for i := range rows {
		rows[i].StartSeconds = (time.Duration(i) * timelineWindow).Seconds()
		rows[i].TimeToAdmission = Summarize(waits[i])
		if capacity > 0 {
			rows[i].QuotaHeld /= float64(capacity) * timelineWindow.Seconds()
		}
	}
	return rows
}

// addHeld adds milliCPU × the seconds of h that fall in each row to the
// rows' QuotaHeld (millicore-seconds until windows divides them).
func addHeld(rows []Window, start time.Time, h span, milliCPU int64) {
	for i := range rows {
		from := start.Add(time.Duration(i) * timelineWindow)
		to := from.Add(timelineWindow)
		if overlap := minTime(to, h.to).Sub(latest(from, h.from)); overlap > 0 {
			rows[i].QuotaHeld += overlap.Seconds() * float64(milliCPU)
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func latest(ts ...time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}

// TimelineTable renders each run's timeline, for mixes whose arrivals
// are spread over the run.
func TimelineTable(results []*Result) string {
	var b strings.Builder
	for _, res := range results {
		if len(res.Timeline) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n**%s, %s: per minute from the first creation**\n\n", res.Target, res.Mode)
		b.WriteString("| minute | created | admitted | backlog at end | time to admission p50 / p99 (ms) | quota held |\n|---:|---:|---:|---:|---|---:|\n")
		for i, w := range res.Timeline {
			fmt.Fprintf(&b, "| %d | %d | %d | %d | %.0f / %.0f | %.0f%% |\n", i+1, w.Created, w.Admitted, w.Backlog, w.TimeToAdmission.P50, w.TimeToAdmission.P99, 100*w.QuotaHeld)
		}
	}
	return b.String()
}
