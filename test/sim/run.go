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
		o := Outcome{Scenario: s, Jobs: len(jobs), Results: results}
		if s.Name == "starvation" {
			if err := starvationExtras(&o, jobs); err != nil {
				return nil, err
			}
		}
		o.Elapsed = time.Since(start)
		outs = append(outs, o)
	}
	return outs, nil
}

// starvationExtras runs the starvation scenario's yield sweep and its
// guarded variants past the last arrival.
func starvationExtras(o *Outcome, jobs []Job) error {
	var err error
	if o.Yield, err = YieldSweep(jobs); err != nil {
		return err
	}
	for _, v := range o.Scenario.Variants[1:] {
		r, err := Drained(jobs, v)
		if err != nil {
			return err
		}
		o.Drained = append(o.Drained, r)
	}
	return nil
}
