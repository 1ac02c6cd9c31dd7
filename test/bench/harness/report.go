package harness

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Group is the repetitions of one target in one mode.
type Group struct {
	Target, Mode string
	Runs         []*Result
}

// Groups orders results by mode (in the order of Modes, unknown modes
// last by name), then target (muster first).
func Groups(results []*Result) []Group {
	var gs []Group
	for _, r := range results {
		i := slices.IndexFunc(gs, func(g Group) bool { return g.Target == r.Target && g.Mode == r.Mode })
		if i < 0 {
			gs = append(gs, Group{Target: r.Target, Mode: r.Mode})
			i = len(gs) - 1
		}
		gs[i].Runs = append(gs[i].Runs, r)
	}
	slices.SortStableFunc(gs, func(a, b Group) int {
		if c := cmp.Compare(modeRank(a.Mode), modeRank(b.Mode)); c != 0 {
			return c
		}
		if c := strings.Compare(a.Mode, b.Mode); c != 0 {
			return c
		}
		return strings.Compare(b.Target, a.Target) // "muster" before "kueue"
	})
	return gs
}

// modeRank is a mode's place in Modes; unknown modes come after.
func modeRank(mode string) int {
	if i := slices.Index(Modes, mode); i >= 0 {
		return i
	}
	return len(Modes)
}

func (g Group) spread(f func(*Result) float64) Spread {
	return SpreadOf(measured(g.Runs, f))
}

// measured is f of each run that measured it: NaN means a run did not
// (one recorded before the figure existed, in a resumed comparison).
func measured(rs []*Result, f func(*Result) float64) []float64 {
	xs := make([]float64, 0, len(rs))
	for _, r := range rs {
		if x := f(r); !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	return xs
}

// anyMeasured: some run of the groups measured f (a row none did, such as
// one kept for records of an older harness, is left out).
func anyMeasured(f func(*Result) float64, gs ...*Group) bool {
	for _, g := range gs {
		if g != nil && len(measured(g.Runs, f)) > 0 {
			return true
		}
	}
	return false
}

// metric is one row of the comparison table.
type metric struct {
	name string
	get  func(*Result) float64
	// format of the value.
	format string
	// higherIsBetter decides the direction of the ratio's meaning only in
	// the text; the ratio is always muster/kueue.
	higherIsBetter bool
}

func metrics(classes []string) []metric {
	ms := []metric{
		{"admissions/s (overall)", func(r *Result) float64 { return r.AdmissionsPerSecond }, "%.1f", true},
		{"admissions/s (peak 5 s)", func(r *Result) float64 { return r.PeakAdmissionsPerSecond }, "%.1f", true},
		{"wall time (s)", func(r *Result) float64 { return r.WallSeconds }, "%.1f", false},
	}
	for _, c := range classes {
		c := c
		ms = append(ms,
			metric{c + " time to admission p50 (ms)", func(r *Result) float64 { return r.TimeToAdmission[c].P50 }, "%.0f", false},
			metric{c + " time to admission p99 (ms)", func(r *Result) float64 { return r.TimeToAdmission[c].P99 }, "%.0f", false},
			metric{c + " time to admission mean (ms)", func(r *Result) float64 { return r.TimeToAdmission[c].Mean }, "%.0f", false},
			metric{c + " time to admission max (ms)", func(r *Result) float64 { return r.TimeToAdmission[c].Max }, "%.0f", false},
		)
	}
	return append(ms,
		metric{"quota utilization (%)", func(r *Result) float64 { return 100 * r.Utilization }, "%.1f", true},
		metric{"evictions", func(r *Result) float64 { return float64(r.Evictions) }, "%.0f", false},
		metric{"evictions of workloads past their runtime", func(r *Result) float64 { return float64(r.EvictionsOverdue) }, "%.0f", false},
		metric{"of which the kubelet surely saw the admission too late", lagMeasured(func(r *Result) float64 { return float64(r.EvictionsOverdueSeenLate) }), "%.0f", false},
		metric{"kubelet saw admissions, lag p50 (ms, up to 1 s over)", lagMeasured(func(r *Result) float64 { return r.AdmissionSeenLag.P50 }), "%.0f", false},
		metric{"kubelet saw admissions, lag p99 (ms, up to 1 s over)", lagMeasured(func(r *Result) float64 { return r.AdmissionSeenLag.P99 }), "%.0f", false},
		metric{"controller CPU (s)", func(r *Result) float64 { return r.Usage.CPUSeconds }, "%.1f", false},
		metric{"controller max RSS (MiB)", rss(true), "%.0f", false},
		metric{"controller max RSS, rusage: at least the harness's (MiB)", rss(false), "%.0f", false},
		metric{"API server CPU (s)", func(r *Result) float64 { return r.APIServerCPUSeconds }, "%.1f", false},
		metric{"API writes per workload", func(r *Result) float64 { return r.WritesPerWorkload }, "%.2f", false},
		metric{"of which queue status", func(r *Result) float64 { return r.QueueStatusWritesPerWorkload() }, "%.2f", false},
		metric{"of which the Workload's own (object, status, events)", func(r *Result) float64 { return r.WorkloadWritesPerWorkload() }, "%.2f", false},
		metric{"API reads per workload (get+list)", func(r *Result) float64 {
			return r.RequestsPerWorkload["get"] + r.RequestsPerWorkload["list"]
		}, "%.2f", false},
	)
}

// rss is the controller's peak RSS of the runs that measured it as the
// child's own (own) or by rusage (!own), NaN (left out) for the others.
func rss(own bool) func(*Result) float64 {
	return func(r *Result) float64 {
		if r.Usage.MaxRSSOwn != own {
			return math.NaN()
		}
		return r.Usage.MaxRSSMiB
	}
}

// lagMeasured is f for runs that measured the kubelet's lag, NaN (left
// out) for runs recorded before it was.
func lagMeasured(f func(*Result) float64) func(*Result) float64 {
	return func(r *Result) float64 {
		if r.AdmissionSeenLag.Count == 0 {
			return math.NaN()
		}
		return f(r)
	}
}

// placementMetrics are the rows of the placement check of a
// topology-aware mix: all but the peak must be 0.
func placementMetrics() []metric {
	stat := func(f func(*PlacementStats) int) func(*Result) float64 {
		return func(r *Result) float64 {
			if r.Placement == nil {
				return 0
			}
			return float64(f(r.Placement))
		}
	}
	return []metric{
		{"over-placements (node cpu or pods exceeded)", stat(func(p *PlacementStats) int { return p.OverPlacements }), "%.0f", false},
		{"required-level violations", stat(func(p *PlacementStats) int { return p.RequiredViolations }), "%.0f", false},
		{"admissions without a placement", stat(func(p *PlacementStats) int { return p.Unplaced }), "%.0f", false},
		{"invalid placements", stat(func(p *PlacementStats) int { return p.Invalid }), "%.0f", false},
		{"placement watch gaps (check exact only at 0)", stat(func(p *PlacementStats) int { return p.WatchGaps }), "%.0f", false},
		{"placement check behind at the run's end (runs)", stat(func(p *PlacementStats) int {
			if p.Behind {
				return 1
			}
			return 0
		}), "%.0f", false},
		{"peak node cpu admitted (%)", func(r *Result) float64 {
			if r.Placement == nil {
				return 0
			}
			return 100 * r.Placement.PeakNodeCPU
		}, "%.0f", false},
	}
}

// apiServerMetrics are the rows of the API server's own metrics: how
// close to its ceiling a run took it. A run recorded before they were
// sampled has none (NaN: left out, not counted as 0).
func apiServerMetrics() []metric {
	load := func(f func(*APIServerLoad) float64) func(*Result) float64 {
		return func(r *Result) float64 {
			if r.APIServer == nil {
				return math.NaN()
			}
			return f(r.APIServer)
		}
	}
	positive := func(f func(*Result) float64) func(*Result) float64 {
		return func(r *Result) float64 {
			if x := f(r); x > 0 {
				return x
			}
			return math.NaN()
		}
	}
	return []metric{
		{"machine CPU busy, all processes (% of all cores)", positive(func(r *Result) float64 { return 100 * r.MachineBusy }), "%.0f", false},
		{"harness CPU (s)", positive(func(r *Result) float64 { return r.HarnessCPUSeconds }), "%.1f", false},
		{"API server and etcd nice (others 0)", func(r *Result) float64 { return float64(r.ControlPlaneNice) }, "%.0f", false},
		{"API server cores busy (CPU s / wall s)", func(r *Result) float64 {
			if r.WallSeconds == 0 {
				return math.NaN()
			}
			return r.APIServerCPUSeconds / r.WallSeconds
		}, "%.2f", false},
		{"API server writes/s, all clients (mean)", load(func(l *APIServerLoad) float64 { return l.MutatingPerSecond }), "%.0f", true},
		{"API server writes/s, all clients (busiest 5 s)", load(func(l *APIServerLoad) float64 { return l.PeakMutatingPerSecond }), "%.0f", true},
		{"API server reads/s, all clients (mean)", load(func(l *APIServerLoad) float64 { return l.ReadsPerSecond }), "%.0f", false},
		{"API server write latency p50 (ms)", load(func(l *APIServerLoad) float64 { return l.MutatingP50 }), "%.1f", false},
		{"API server write latency p99 (ms)", load(func(l *APIServerLoad) float64 { return l.MutatingP99 }), "%.1f", false},
		{"API server read latency p99 (ms)", load(func(l *APIServerLoad) float64 { return l.ReadP99 }), "%.1f", false},
		{"API server writes in flight (highest 1 s mark, sampled)", load(func(l *APIServerLoad) float64 { return l.PeakInflightMutating }), "%.0f", false},
		{"API server reads in flight (highest 1 s mark, sampled)", load(func(l *APIServerLoad) float64 { return l.PeakInflightReads }), "%.0f", false},
		{"watches the API server closed, client behind (all clients)", load(func(l *APIServerLoad) float64 {
			if l.TerminatedWatchers == nil {
				return math.NaN()
			}
			return *l.TerminatedWatchers
		}), "%.0f", false},
		{"Workload watch cache at the start (events; watch buffers ~1/75 of it, 10-100)", load(func(l *APIServerLoad) float64 {
			if l.WorkloadWatchCache == 0 {
				return math.NaN()
			}
			return l.WorkloadWatchCache
		}), "%.0f", false},
	}
}

func sampled(results []*Result) bool {
	return slices.ContainsFunc(results, func(r *Result) bool { return r.APIServer != nil })
}

func hasPlacements(results []*Result) bool {
	return slices.ContainsFunc(results, func(r *Result) bool { return r.Placement != nil })
}

// Table renders one markdown table per mode: Muster, Kueue and the ratio
// Muster/Kueue, values as mean ± half range over the repetitions.
func Table(results []*Result, classes []string) string {
	var b strings.Builder
	groups := Groups(results)
	for _, mode := range Modes {
		var m, k *Group
		for i := range groups {
			if groups[i].Mode != mode {
				continue
			}
			switch groups[i].Target {
			case "muster":
				m = &groups[i]
			case "kueue":
				k = &groups[i]
			}
		}
		if m == nil && k == nil {
			continue
		}
		fmt.Fprintf(&b, "\n**%s** (%s)\n\n| metric | Muster | Kueue | Muster/Kueue |\n|---|---:|---:|---:|\n", mode, repsText(m, k))
		ms := metrics(classes)
		if hasPlacements(results) {
			ms = append(ms, placementMetrics()...)
		}
		if sampled(results) {
			ms = append(ms, apiServerMetrics()...)
		}
		for _, mt := range ms {
			if !anyMeasured(mt.get, m, k) {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mt.name, cell(m, mt), cell(k, mt), ratio(m, k, mt))
		}
		fmt.Fprintf(&b, "| API requests per workload by verb | %s | %s | |\n", verbs(m), verbs(k))
	}
	return b.String()
}

func repsText(m, k *Group) string {
	n := 0
	for _, g := range []*Group{m, k} {
		if g != nil {
			n = max(n, len(g.Runs))
		}
	}
	if n == 1 {
		return "1 run each"
	}
	return fmt.Sprintf("mean ± half range of %d runs each", n)
}

func cell(g *Group, mt metric) string {
	if g == nil {
		return "–"
	}
	s := g.spread(mt.get)
	if s.N == 0 {
		return "–"
	}
	if s.N > 1 {
		return fmt.Sprintf(mt.format+" ± "+mt.format, s.Mean, s.Half)
	}
	return fmt.Sprintf(mt.format, s.Mean)
}

func ratio(m, k *Group, mt metric) string {
	if m == nil || k == nil {
		return "–"
	}
	ms, ks := m.spread(mt.get), k.spread(mt.get)
	if ms.N == 0 || ks.N == 0 || ks.Mean == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", ms.Mean/ks.Mean)
}

func verbs(g *Group) string {
	if g == nil {
		return "–"
	}
	var parts []string
	for _, v := range []string{"create", "patch", "update", "apply", "delete", "get", "list", "watch"} {
		s := g.spread(func(r *Result) float64 { return r.RequestsPerWorkload[v] })
		if s.Mean > 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.2f", v, s.Mean))
		}
	}
	return strings.Join(parts, ", ")
}

// CeilingTable shows each system's admissions/s as a share of the
// calibrated ceiling of workload lifecycles (create + admission write +
// finish write) the API server can carry on this machine.
func CeilingTable(results []*Result, cal *Calibration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nAgainst the calibrated ceiling of %.1f workload lifecycles/s (%.0f creates/s, %.0f status writes/s):\n\n", cal.LifecyclesPerSecond, cal.CreatesPerSecond, cal.PatchesPerSecond)
	b.WriteString("| mode | system | admissions/s | share of ceiling | peak 5 s share |\n|---|---|---:|---:|---:|\n")
	for _, g := range Groups(results) {
		aps := g.spread(func(r *Result) float64 { return r.AdmissionsPerSecond })
		peak := g.spread(func(r *Result) float64 { return r.PeakAdmissionsPerSecond })
		fmt.Fprintf(&b, "| %s | %s | %.1f | %.0f%% | %.0f%% |\n", g.Mode, g.Target, aps.Mean,
			100*aps.Mean/cal.LifecyclesPerSecond, 100*peak.Mean/cal.LifecyclesPerSecond)
	}
	return b.String()
}
