package sim

import "time"

// The numbers the summary reports, per scenario, computed from its results
// (one per variant, in the scenario's order).

// TeamHours is one decay variant's GPU-hours per team in DayStart..DayEnd.
type TeamHours struct {
	Variant    string
	Night, Day float64
}

// DecayNumbers are each team's GPU-hours in hours 8-12, per variant.
func DecayNumbers(results []*Result) []TeamHours {
	out := make([]TeamHours, 0, len(results))
	for _, r := range results {
		out = append(out, TeamHours{Variant: r.Name,
			Night: r.GPUHours("night", DayStart, DayEnd), Day: r.GPUHours("day", DayStart, DayEnd)})
	}
	return out
}

// WaitStats are the waits of one class of jobs of one variant.
type WaitStats struct {
	Jobs, NeverAdmitted int
	P50, P99, Max       time.Duration
}

// SummariseWaits summarises the waits of the jobs keep selects; jobs never
// admitted count with their wait until the horizon.
func SummariseWaits(r *Result, keep func(JobOutcome) bool) WaitStats {
	w := r.Waits(keep)
	st := WaitStats{Jobs: len(w), P50: Percentile(w, 50), P99: Percentile(w, 99),
		NeverAdmitted: r.Count(func(j JobOutcome) bool { return keep(j) && !j.Admitted })}
	if len(w) > 0 {
		st.Max = w[len(w)-1]
	}
	return st
}

// StarvationRow is one starvation variant's numbers.
type StarvationRow struct {
	Variant      string
	Narrow, Wide WaitStats
	// Utilisation is over the whole run, in [0, 1].
	Utilisation float64
}

// StarvationNumbers are the waits of 1-GPU and 16-GPU jobs and the
// utilisation, per variant.
func StarvationNumbers(results []*Result) []StarvationRow {
	out := make([]StarvationRow, 0, len(results))
	for _, r := range results {
		out = append(out, StarvationRow{Variant: r.Name,
			Narrow:      SummariseWaits(r, func(j JobOutcome) bool { return j.GPUs == 1 }),
			Wide:        SummariseWaits(r, func(j JobOutcome) bool { return j.GPUs == Wide }),
			Utilisation: r.Utilisation(0, r.Horizon)})
	}
	return out
}

// MinRuntimeRow is one minimum-runtime variant's numbers.
type MinRuntimeRow struct {
	Variant     string
	Preemptions int
	// YoungVictims are the victims that had run less than
	// MinRuntimeSetting: restarted work thrown away again soon after.
	YoungVictims int
	LostGPUHours float64
	High, Low    WaitStats
	Utilisation  float64
}

// MinRuntimeNumbers are the preemptions, the work they lost and the waits
// of high- and low-priority jobs, per variant.
func MinRuntimeNumbers(results []*Result) []MinRuntimeRow {
	out := make([]MinRuntimeRow, 0, len(results))
	for _, r := range results {
		young := 0
		for _, ran := range r.VictimRuns {
			if ran < MinRuntimeSetting {
				young++
			}
		}
		out = append(out, MinRuntimeRow{Variant: r.Name, Preemptions: r.Preemptions, YoungVictims: young, LostGPUHours: r.LostGPUHours,
			High:        SummariseWaits(r, func(j JobOutcome) bool { return j.Priority == High }),
			Low:         SummariseWaits(r, func(j JobOutcome) bool { return j.Priority != High }),
			Utilisation: r.Utilisation(0, r.Horizon)})
	}
	return out
}
