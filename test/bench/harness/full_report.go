package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FullReport renders a full comparison in out: the calibrations, the
// acceptance table, then every suite's figures, each as median (min–max)
// over its runs and Muster/Kueue as the ratio of medians (lowest–highest).
func FullReport(out string, suites []Suite) (string, error) {
	var b strings.Builder
	b.WriteString("## Muster and Kueue, every suite\n\n")
	for _, s := range suites {
		cals, err := suiteCalibrations(filepath.Join(out, s.Name))
		if err != nil {
			return "", err
		}
		b.WriteString(cals)
	}
	acceptance, details, err := suiteTables(out, suites)
	if err != nil {
		return "", err
	}
	b.WriteString("\n" + acceptance + details)
	return b.String(), nil
}

// suiteCalibrations lists a suite's calibrations: the invocations' starts
// and ends, and those of a run begun before they were listed (a start
// and an end file each).
func suiteCalibrations(dir string) (string, error) {
	var b strings.Builder
	line := func(when string, cal *Calibration) {
		fmt.Fprintf(&b, "- %s, API server %s: %.1f workload lifecycles/s (%.0f creates/s, %.0f status writes/s)\n",
			filepath.Base(dir), when, cal.LifecyclesPerSecond, cal.CreatesPerSecond, cal.PatchesPerSecond)
	}
	for _, name := range []string{"calibration.json", "calibration-end.json"} {
		cal, err := loadCalibrationFile(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		if cal != nil {
			line(strings.TrimSuffix(name, ".json"), cal)
		}
	}
	list, err := loadCalibrations(dir)
	if err != nil {
		return "", err
	}
	for _, c := range list {
		line(fmt.Sprintf("at the %s of runs (%s)", c.Phase, c.At.Format("2006-01-02 15:04 UTC")), &c.Calibration)
	}
	return b.String(), nil
}

func suiteTables(out string, suites []Suite) (string, string, error) {
	var acc, det strings.Builder
	acc.WriteString("| suite | mode | runs | admissions/s, Muster/Kueue | evictions Muster | evictions Kueue | writes/workload Muster: all; queue status; the Workload's own | writes/workload Kueue: all; queue status; the Workload's own | worst class p99, Muster/Kueue |\n")
	acc.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var sweeps strings.Builder
	for _, s := range suites {
		dir := filepath.Join(out, s.Name)
		if s.Depths != nil {
			rs, err := loadSweep(dir)
			if err != nil {
				return "", "", err
			}
			sweeps.WriteString(sweepRanges(s.Name, rs))
			continue
		}
		rs, err := LoadResults(dir)
		if err != nil {
			return "", "", err
		}
		cfg, err := LoadConfig(s.Config)
		if err != nil {
			return "", "", err
		}
		classes := cfg.Plan().Classes
		for _, mode := range Modes {
			m, k := byTarget(rs, "muster", mode), byTarget(rs, "kueue", mode)
			if len(m)+len(k) == 0 {
				continue
			}
			acc.WriteString(acceptanceRow(s.Name, mode, m, k, classes))
			fmt.Fprintf(&det, "\n### %s, %s (%d Muster runs%s, %d Kueue runs)\n\n", s.Name, mode, len(m), builds(m), len(k))
			det.WriteString(rangeTable(m, k, classes))
		}
	}
	return acc.String() + sweeps.String(), det.String(), nil
}

// builds names the commits a target's runs were built from, as " of
// 953e3c0" (or of several, when a comparison resumed with another build).
func builds(rs []*Result) string {
	var bs []string
	for _, r := range rs {
		if r.Build != "" && !slices.Contains(bs, r.Build) {
			bs = append(bs, r.Build)
		}
	}
	if len(bs) == 0 {
		return ""
	}
	return " of " + strings.Join(bs, ", ")
}

func byTarget(rs []*Result, target, mode string) []*Result {
	var out []*Result
	for _, r := range rs {
		if r.Target == target && r.Mode == mode {
			out = append(out, r)
		}
	}
	return out
}

func rangeOf(rs []*Result, f func(*Result) float64) Range {
	return RangeOf(measured(rs, f))
}

// worstP99 is the highest class p99 of a run.
func worstP99(classes []string) func(*Result) float64 {
	return func(r *Result) float64 {
		var w float64
		for _, c := range classes {
			w = max(w, r.TimeToAdmission[c].P99)
		}
		return w
	}
}

func acceptanceRow(suite, mode string, m, k []*Result, classes []string) string {
	aps := func(r *Result) float64 { return r.AdmissionsPerSecond }
	ev := func(r *Result) float64 { return float64(r.Evictions) }
	wr := func(r *Result) float64 { return r.WritesPerWorkload }
	qs := func(r *Result) float64 { return r.QueueStatusWritesPerWorkload() }
	own := func(r *Result) float64 { return r.WorkloadWritesPerWorkload() }
	writes := func(rs []*Result) string {
		return fmt.Sprintf("%s; %.2f; %s", rangeOf(rs, wr).format("%.2f"), rangeOf(rs, qs).Median, rangeOf(rs, own).format("%.2f"))
	}
	p99 := worstP99(classes)
	return fmt.Sprintf("| %s | %s | %d + %d | %s | %s | %s | %s | %s | %s |\n", suite, mode, len(m), len(k),
		ratioCell(rangeOf(m, aps), rangeOf(k, aps)),
		rangeOf(m, ev).format("%.0f"), rangeOf(k, ev).format("%.0f"),
		writes(m), writes(k),
		ratioCell(rangeOf(m, p99), rangeOf(k, p99)))
}

// rangeTable is every figure of one suite and mode.
func rangeTable(m, k []*Result, classes []string) string {
	var b strings.Builder
	b.WriteString("| figure | Muster | Kueue | Muster/Kueue |\n|---|---:|---:|---:|\n")
	ms := metrics(classes)
	if hasPlacements(append(append([]*Result{}, m...), k...)) {
		ms = append(ms, placementMetrics()...)
	}
	if sampled(append(append([]*Result{}, m...), k...)) {
		ms = append(ms, apiServerMetrics()...)
	}
	for _, mt := range ms {
		a, c := rangeOf(m, mt.get), rangeOf(k, mt.get)
		if a.N+c.N == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mt.name, a.format(mt.format), c.format(mt.format), ratioCell(a, c))
	}
	return b.String()
}

// sweepRanges are the pending-depth sweep's rows of the acceptance table.
func sweepRanges(suite string, rs []*SweepResult) string {
	var b strings.Builder
	b.WriteString("\n| suite | mode | pending | runs | writes to settle Muster | Kueue | probe p99 ms Muster | Kueue | max RSS MiB Muster | Kueue |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	type key struct {
		mode  string
		depth int
	}
	var keys []key
	for _, r := range rs {
		if k := (key{r.Mode, r.Depth}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		get := func(target string, f func(*SweepResult) float64) Range {
			var xs []float64
			for _, r := range rs {
				if r.Target == target && r.Mode == k.mode && r.Depth == k.depth {
					xs = append(xs, f(r))
				}
			}
			return RangeOf(xs)
		}
		writes := func(r *SweepResult) float64 { return float64(r.SettleWrites) }
		p99 := func(r *SweepResult) float64 { return r.Probe.P99 }
		rss := func(r *SweepResult) float64 { return r.MaxRSSMiB }
		fmt.Fprintf(&b, "| %s | %s | %d | %d + %d | %s | %s | %s | %s | %s | %s |\n", suite, k.mode, k.depth,
			get("muster", writes).N, get("kueue", writes).N,
			get("muster", writes).format("%.0f"), get("kueue", writes).format("%.0f"),
			get("muster", p99).format("%.0f"), get("kueue", p99).format("%.0f"),
			get("muster", rss).format("%.0f"), get("kueue", rss).format("%.0f"))
	}
	return b.String()
}

// Markers around the generated table in a document.
const (
	docBegin = "<!-- bench full: begin (generated by `bench full -doc`; do not edit) -->"
	docEnd   = "<!-- bench full: end -->"
)

// UpdateDoc replaces what lies between the markers in the document at
// path with text; the markers must be there.
func UpdateDoc(path, text string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc := string(data)
	i, j := strings.Index(doc, docBegin), strings.Index(doc, docEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q … %q markers", path, docBegin, docEnd)
	}
	doc = doc[:i+len(docBegin)] + "\n" + text + "\n" + doc[j:]
	return os.WriteFile(path, []byte(doc), 0o644)
}
