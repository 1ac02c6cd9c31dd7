package sim

import (
	"reflect"
	"testing"
)

// TestRunIsDeterministic: the same trace replayed twice gives the same
// result, decision for decision (the engine orders simultaneous events and
// iterates no map unsorted), so the plots and the summary change only when
// the trace, a knob or the core does. It replays the first third of each
// scenario, which includes every kind of event.
func TestRunIsDeterministic(t *testing.T) {
	for _, s := range Scenarios() {
		t.Run(s.Name, func(t *testing.T) {
			jobs := s.Generate(s.Seed)
			opts := DefaultOptions(s.Horizon / 3)
			for _, v := range s.Variants {
				a, err := Run(v.Name, v.Setup, jobs, opts)
				if err != nil {
					t.Fatal(err)
				}
				b, err := Run(v.Name, v.Setup, jobs, opts)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%s: two replays differ (%d vs %d cycles, %d vs %d runs)", v.Name, a.Cycles, b.Cycles, len(a.Runs), len(b.Runs))
				}
			}
		})
	}
}

// TestGenerateIsDeterministic: a seed makes the same trace every time, so
// the committed traces can be regenerated and compared.
func TestGenerateIsDeterministic(t *testing.T) {
	for _, s := range Scenarios() {
		if a, b := s.Generate(s.Seed), s.Generate(s.Seed); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two generations from seed %d differ", s.Name, s.Seed)
		}
	}
}
