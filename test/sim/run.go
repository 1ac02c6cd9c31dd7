package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// GenerateTraces writes every scenario's trace into dir, made from its
// seed: the same files every time.
func GenerateTraces(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range Scenarios() {
		if err := WriteTraceFile(filepath.Join(dir, s.Trace), s.Generate(s.Seed)); err != nil {
			return err
		}
	}
	return nil
}

// RunScenarios replays every scenario's trace from dir under each of its
// variants.
func RunScenarios(dir string) ([]Outcome, error) {
	var outs []Outcome
	for _, s := range Scenarios() {
		jobs, err := ReadTraceFile(filepath.Join(dir, s.Trace))
		if err != nil {
			return nil, fmt.Errorf("%w (make the traces with -generate)", err)
		}
		start := time.Now()
		results, err := s.Run(jobs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		outs = append(outs, Outcome{Scenario: s, Jobs: len(jobs), Results: results, Elapsed: time.Since(start)})
	}
	return outs, nil
}

// WritePlots draws each outcome's plots into dir.
func WritePlots(dir string, outs []Outcome) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, o := range outs {
		var err error
		switch o.Scenario.Name {
		case "decay":
			err = PlotDecayShare(filepath.Join(dir, "sim-decay-share.png"), o.Results)
		case "starvation":
			err = PlotStarvationWait(filepath.Join(dir, "sim-starvation-wait.png"), o.Results)
			if err == nil {
				err = PlotUtilisation(filepath.Join(dir, "sim-starvation-utilisation.png"), o.Results)
			}
		case "minruntime":
			err = PlotMinRuntime(filepath.Join(dir, "sim-minruntime.png"), o.Results)
		}
		if err != nil {
			return fmt.Errorf("%s plots: %w", o.Scenario.Name, err)
		}
	}
	return nil
}
