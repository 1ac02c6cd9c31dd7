package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Suite is one mix of the full comparison, or the pending-depth sweep
// (Depths set, Config empty).
type Suite struct {
	Name   string
	Config string
	Depths []int
}

// DefaultSuites are every suite of docs/performance.md's acceptance table.
var DefaultSuites = []Suite{
	{Name: "baseline", Config: "test/bench/configs/baseline.yaml"},
	{Name: "large-scale", Config: "test/bench/configs/large-scale.yaml"},
	{Name: "tas", Config: "test/bench/configs/tas.yaml"},
	{Name: "sweep", Depths: []int{10000}},
}

// FullSpec runs every suite for every target and mode Reps times, the
// targets alternating run by run (A/B/A/B: a drift of the machine hits
// both), with the API server calibrated before and after. A run already
// in Out is not run again, so an interrupted comparison resumes where it
// stopped.
type FullSpec struct {
	Suites     []Suite
	Targets    []Target
	Modes      []string
	Reps       int
	Out        string
	Log        io.Writer
	MusterCRDs string
	// CalibrationSeconds is each calibration measurement's length.
	CalibrationSeconds float64
	// RunTimeout stops a run that has not finished by then (0: Run's
	// default).
	RunTimeout time.Duration
	// StartBy, when set, is the last time a run may start; the invocation
	// then calibrates the suite it was in and reports, and a later one
	// resumes (a session ends before a 50k suite does).
	StartBy time.Time
}

// Full runs the comparison and writes Out/report.md: per suite and mode,
// the median, min and max of every figure and the ratio with its spread.
// A full comparison spans sessions, so each invocation calibrates the API
// server before and after its runs of each suite, into the suite's own
// list: every figure is read against the machine's speed when it was
// taken. A suite with nothing left to run is not calibrated again.
func Full(ctx context.Context, spec FullSpec) error {
	if err := os.MkdirAll(spec.Out, 0o755); err != nil {
		return err
	}
	for _, s := range spec.Suites {
		dir := filepath.Join(spec.Out, s.Name)
		pending, err := pendingRuns(spec, s, dir)
		if err != nil {
			return err
		}
		if pending == 0 {
			continue
		}
		if tooLate(spec.StartBy, spec.Log) {
			break
		}
		if err := runSuite(ctx, spec, s, dir, pending); err != nil {
			return err
		}
	}
	report, err := FullReport(spec.Out, spec.Suites)
	if err != nil {
		return err
	}
	fmt.Fprint(spec.Log, report)
	return os.WriteFile(filepath.Join(spec.Out, "report.md"), []byte(report), 0o644)
}

// runSuite runs what is left of a suite between two calibrations; when
// its last start time passed during the first, no run started and the
// second is not taken (it would bracket nothing).
func runSuite(ctx context.Context, spec FullSpec, s Suite, dir string, pending int) error {
	cal, err := calibrateSuite(ctx, spec, dir, "start")
	if err != nil {
		return err
	}
	if s.Depths != nil {
		err = sweepReps(ctx, spec, s, dir)
	} else {
		err = compareSuite(ctx, spec, s, dir, cal)
	}
	if err != nil {
		return fmt.Errorf("suite %s: %w", s.Name, err)
	}
	left, err := pendingRuns(spec, s, dir)
	if err != nil || left == pending {
		return err
	}
	_, err = calibrateSuite(ctx, spec, dir, "end")
	return err
}

// RunsLeft counts the runs of all the suites not recorded yet.
func RunsLeft(spec FullSpec) (int, error) {
	n := 0
	for _, s := range spec.Suites {
		k, err := pendingRuns(spec, s, filepath.Join(spec.Out, s.Name))
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

// pendingRuns counts the runs of a suite not recorded yet.
func pendingRuns(spec FullSpec, s Suite, dir string) (int, error) {
	reps, n := max(spec.Reps, 1), 0
	if s.Depths != nil {
		rs, err := loadSweep(dir)
		if err != nil {
			return 0, err
		}
		for _, mode := range spec.Modes {
			for _, d := range s.Depths {
				for _, t := range spec.Targets {
					n += max(0, reps-sweepsDone(rs, t.Name, mode, d))
				}
			}
		}
		return n, nil
	}
	rs, err := LoadResults(dir)
	if err != nil {
		return 0, err
	}
	for _, mode := range spec.Modes {
		for _, t := range spec.Targets {
			n += max(0, reps-runsDone(rs, t.Name, mode))
		}
	}
	return n, nil
}

// Calibrated is one calibration of a suite: at the start or the end of an
// invocation's runs of it.
type Calibrated struct {
	At    time.Time `json:"at"`
	Phase string    `json:"phase"`
	Calibration
}

const calibrationsFile = "calibrations.json"

// calibrateSuite measures the API server and adds it to dir's list.
func calibrateSuite(ctx context.Context, spec FullSpec, dir, phase string) (*Calibration, error) {
	list, err := loadCalibrations(dir)
	if err != nil {
		return nil, err
	}
	at := time.Now().UTC()
	cal, err := Calibrate(ctx, spec.MusterCRDs, filepath.Join(dir, "runs", "calibration-"+at.Format("20060102T150405")),
		time.Duration(spec.CalibrationSeconds*float64(time.Second)))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(spec.Log, "%s, API server at the %s: %.1f workload lifecycles/s (%.0f creates/s, %.0f status writes/s)\n",
		filepath.Base(dir), phase, cal.LifecyclesPerSecond, cal.CreatesPerSecond, cal.PatchesPerSecond)
	list = append(list, Calibrated{At: at, Phase: phase, Calibration: *cal})
	return cal, writeJSON(filepath.Join(dir, calibrationsFile), list)
}

func loadCalibrations(dir string) ([]Calibrated, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var list []Calibrated
	_, err := readJSON(filepath.Join(dir, calibrationsFile), &list)
	return list, err
}

func compareSuite(ctx context.Context, spec FullSpec, s Suite, dir string, cal *Calibration) error {
	cfg, err := LoadConfig(s.Config)
	if err != nil {
		return err
	}
	return Compare(ctx, CompareSpec{Config: cfg, ConfigName: filepath.Base(s.Config), Targets: spec.Targets,
		Modes: spec.Modes, Reps: spec.Reps, Out: dir, Log: spec.Log, Calibration: cal, Resume: true,
		RunTimeout: spec.RunTimeout, StartBy: spec.StartBy})
}

// sweepReps runs the sweep's depths per mode and repetition, the targets
// alternating, into dir/sweep.json (kept as it grows, to resume from).
func sweepReps(ctx context.Context, spec FullSpec, s Suite, dir string) error {
	results, err := loadSweep(dir)
	if err != nil {
		return err
	}
	for _, mode := range spec.Modes {
		for rep := 1; rep <= max(spec.Reps, 1); rep++ {
			for _, depth := range s.Depths {
				for _, t := range spec.Targets {
					if sweepsDone(results, t.Name, mode, depth) >= rep {
						continue
					}
					if tooLate(spec.StartBy, spec.Log) {
						return nil
					}
					run := filepath.Join(dir, "runs", fmt.Sprintf("%s-%s-%d-%d", t.Name, mode, depth, rep))
					r, err := Sweep(ctx, t, depth, mode, run, DefaultSweepParams)
					if err != nil {
						return fmt.Errorf("%s %s depth %d run %d: %w", t.Name, mode, depth, rep, err)
					}
					fmt.Fprintf(spec.Log, "%-6s %-11s sweep %d run %d: settled %v after %.0f s (%d writes), probe p99 %.0f ms, RSS %.0f MiB\n",
						t.Name, mode, depth, rep, r.Settled, r.SettleSeconds, r.SettleWrites, r.Probe.P99, r.MaxRSSMiB)
					results = append(results, r)
					if err := writeJSON(filepath.Join(dir, "sweep.json"), results); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func loadSweep(dir string) ([]*SweepResult, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var rs []*SweepResult
	_, err := readJSON(filepath.Join(dir, "sweep.json"), &rs)
	return rs, err
}

func sweepsDone(rs []*SweepResult, target, mode string, depth int) int {
	n := 0
	for _, r := range rs {
		if r.Target == target && r.Mode == mode && r.Depth == depth {
			n++
		}
	}
	return n
}

// runsDone counts the results of a target in a mode, for resuming.
func runsDone(rs []*Result, target, mode string) int {
	n := 0
	for _, r := range rs {
		if r.Target == target && r.Mode == mode {
			n++
		}
	}
	return n
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// Range is a figure over repetitions: median, min and max.
type Range struct {
	Median, Min, Max float64
	N                int
}

// RangeOf summarises repetitions (the median of an even count is the
// mean of the middle two).
func RangeOf(xs []float64) Range {
	if len(xs) == 0 {
		return Range{}
	}
	s := slices.Sorted(slices.Values(xs))
	mid := len(s) / 2
	med := s[mid]
	if len(s)%2 == 0 {
		med = (s[mid-1] + s[mid]) / 2
	}
	return Range{Median: med, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// Ratio is a/b of the medians, and the lowest and highest it could be
// over the runs (min a / max b, max a / min b); ok is false when b is 0.
func Ratio(a, b Range) (mid, lo, hi float64, ok bool) {
	if b.Median == 0 || b.Min == 0 {
		return 0, 0, 0, false
	}
	return a.Median / b.Median, a.Min / b.Max, a.Max / b.Min, true
}

func (r Range) format(f string) string {
	if r.N == 0 {
		return "–"
	}
	if r.N == 1 {
		return fmt.Sprintf(f, r.Median)
	}
	return fmt.Sprintf(f+" ("+f+"–"+f+")", r.Median, r.Min, r.Max)
}

func ratioCell(a, b Range) string {
	mid, lo, hi, ok := Ratio(a, b)
	switch {
	case !ok || a.N == 0:
		return "–"
	case a.N == 1 && b.N == 1:
		return fmt.Sprintf("%.2f", mid)
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", mid, lo, hi)
}
