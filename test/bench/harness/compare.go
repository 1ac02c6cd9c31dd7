package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// CompareSpec runs every target in every mode Reps times, interleaved
// (muster, kueue, muster, kueue, ...) so a drift of the machine hits both.
type CompareSpec struct {
	Config     *Config
	ConfigName string
	Targets    []Target
	Modes      []string
	Reps       int
	Out        string
	Log        io.Writer
	// Profile takes a CPU profile of every target for this long.
	Profile time.Duration
	// Calibration, when known, adds admissions/s as a share of the API
	// server's ceiling to the table.
	Calibration *Calibration
	// Timeline adds each run minute by minute to the report.
	Timeline bool
	// Resume keeps the results already in Out/results.json and runs only
	// the repetitions they lack.
	Resume bool
	// RunTimeout stops a run that has not finished by then (0: Run's
	// default of 30 minutes).
	RunTimeout time.Duration
	// StartBy, when set, is the last time a run may start: the runs left
	// after it are skipped, for a later invocation to resume.
	StartBy time.Time
}

// tooLate reports, and logs, that no run may start now; callers stop at
// the first true.
func tooLate(startBy time.Time, log io.Writer) bool {
	if startBy.IsZero() || time.Now().Before(startBy) {
		return false
	}
	fmt.Fprintf(log, "no run starts after %s: the runs left are for a later invocation\n", startBy.Format(time.RFC3339))
	return true
}

// Compare runs the comparison and writes results.json, results.md and
// time-to-admission.png into Out.
func Compare(ctx context.Context, spec CompareSpec) error {
	if err := os.MkdirAll(spec.Out, 0o755); err != nil {
		return err
	}
	plan := spec.Config.Plan()
	fmt.Fprintf(spec.Log, "Mix %s: %d ClusterQueues, %d workloads, classes %v\n", spec.ConfigName, len(plan.Queues), plan.Workloads(), plan.Classes)
	var results []*Result
	if spec.Resume {
		var err error
		if results, err = LoadResults(spec.Out); err != nil {
			return err
		}
	}
runs:
	for _, mode := range spec.Modes {
		for rep := 1; rep <= max(spec.Reps, 1); rep++ {
			for _, t := range spec.Targets {
				if runsDone(results, t.Name, mode) >= rep {
					continue
				}
				if tooLate(spec.StartBy, spec.Log) {
					break runs
				}
				dir := filepath.Join(spec.Out, "runs", fmt.Sprintf("%s-%s-%d", t.Name, mode, rep))
				began := time.Now()
				res, err := Run(ctx, RunSpec{Config: spec.Config, ConfigName: spec.ConfigName, Target: t, Mode: mode, Dir: dir, Profile: spec.Profile, Timeout: spec.RunTimeout})
				if err != nil {
					return fmt.Errorf("%s %s run %d: %w", t.Name, mode, rep, err)
				}
				fmt.Fprintf(spec.Log, "%-6s %-14s run %d: %d workloads in %.1f s, %.1f admissions/s, %d evictions, %.2f writes/workload (took %s)\n",
					t.Name, mode, rep, res.Workloads, res.WallSeconds, res.AdmissionsPerSecond, res.Evictions, res.WritesPerWorkload, time.Since(began).Round(time.Second))
				logPlacement(spec.Log, res)
				results = append(results, res)
				if err := writeResults(spec.Out, results); err != nil {
					return err
				}
			}
		}
	}
	return writeReport(spec.Out, results, spec.Calibration, plan, spec.ConfigName, spec.Timeline, spec.Log)
}

// logPlacement prints a topology-aware run's placement check.
func logPlacement(log io.Writer, res *Result) {
	p := res.Placement
	if p == nil {
		return
	}
	fmt.Fprintf(log, "       placements: %d admissions checked, %d over-placements, %d required-level violations, %d unplaced, %d invalid, peak node cpu %.0f%%, %d watch gaps, behind at the end %v\n",
		p.Admissions, p.OverPlacements, p.RequiredViolations, p.Unplaced, p.Invalid, 100*p.PeakNodeCPU, p.WatchGaps, p.Behind)
	for _, e := range p.Examples {
		fmt.Fprintf(log, "         e.g. %s\n", e)
	}
}

// Report renders results.md and the plot again from a results directory,
// e.g. after an interrupted comparison.
func Report(dir string, cfg *Config, configName string, timeline bool, log io.Writer) error {
	results, err := LoadResults(dir)
	if err != nil {
		return err
	}
	if len(results) == 0 {
		return fmt.Errorf("no results in %s", dir)
	}
	cal, err := LoadCalibration(dir)
	if err != nil {
		return err
	}
	return writeReport(dir, results, cal, cfg.Plan(), configName, timeline, log)
}

func writeReport(dir string, results []*Result, cal *Calibration, plan Plan, configName string, timeline bool, log io.Writer) error {
	table := Table(results, plan.Classes)
	if cal != nil {
		table += CeilingTable(results, cal)
	}
	if timeline {
		table += TimelineTable(results)
	}
	md := fmt.Sprintf("Mix `%s` (%d ClusterQueues, %d workloads).\n%s", configName, len(plan.Queues), plan.Workloads(), table)
	if err := os.WriteFile(filepath.Join(dir, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Fprint(log, md)
	if err := PlotTimeToAdmission(filepath.Join(dir, "time-to-admission.png"), results, plan.Classes); err != nil {
		return err
	}
	fmt.Fprintf(log, "\nResults: %s/results.{json,md}, plot: %s/time-to-admission.png\n", dir, dir)
	return nil
}

// A results directory keeps each run's figures in results.json and its
// per-workload samples, which only the plot reads, in samples.json: the
// figures of a long comparison are small enough to keep with the
// documentation they back (test/bench/results), its samples are not.
const (
	resultsFile = "results.json"
	samplesFile = "samples.json"
)

// LoadResults reads dir's results, with their samples where dir still has
// them; none yet is no results.
func LoadResults(dir string) ([]*Result, error) {
	var rs []*Result
	if found, err := readJSON(filepath.Join(dir, resultsFile), &rs); err != nil || !found {
		return nil, err
	}
	var samples []map[string][]float64
	if _, err := readJSON(filepath.Join(dir, samplesFile), &samples); err != nil {
		return nil, err
	}
	// Samples are written in the results' order, one entry per run (none
	// for a run recorded where its samples were not kept). Of another
	// length, the results were edited by hand (a run set aside) or a write
	// was cut short: which samples are whose is unknown, so none are used.
	if len(samples) == len(rs) {
		for i, r := range rs {
			r.Samples = samples[i]
		}
	}
	return rs, nil
}

func writeResults(dir string, results []*Result) error {
	lean := make([]Result, len(results))
	samples := make([]map[string][]float64, len(results))
	for i, r := range results {
		lean[i], samples[i] = *r, r.Samples
		lean[i].Samples = nil
	}
	if err := writeJSON(filepath.Join(dir, samplesFile), samples); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, resultsFile), lean)
}

// readJSON decodes path into v; a missing file is not found, not an error.
func readJSON(path string, v any) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(data, v)
}

// LoadCalibration reads calibration.json from a results directory; nil if
// there is none.
func LoadCalibration(dir string) (*Calibration, error) {
	return loadCalibrationFile(filepath.Join(dir, "calibration.json"))
}

// loadCalibrationFile reads a calibration; nil if there is none.
func loadCalibrationFile(path string) (*Calibration, error) {
	cal := &Calibration{}
	if found, err := readJSON(path, cal); err != nil || !found {
		return nil, err
	}
	return cal, nil
}
