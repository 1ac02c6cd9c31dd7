package sim

import (
	"sync"
	"testing"
)

// Test helpers: the scenarios are replayed once per test binary and their
// results shared, so the suite stays within a few seconds.

var (
	replayOnce sync.Once
	replayed   map[string][]*Result
	replayErr  error
)

// results replays the named scenario's generated trace under each variant
// (the first time any test asks) and returns its results, in variant
// order.
func results(t *testing.T, scenario string) []*Result {
	t.Helper()
	replayOnce.Do(func() {
		replayed = map[string][]*Result{}
		for _, s := range Scenarios() {
			rs, err := s.Run(s.Generate(s.Seed))
			if err != nil {
				replayErr = err
				return
			}
			replayed[s.Name] = rs
		}
	})
	if replayErr != nil {
		t.Fatal(replayErr)
	}
	rs, ok := replayed[scenario]
	if !ok {
		t.Fatalf("no scenario %q", scenario)
	}
	return rs
}

// scenario returns the named scenario.
func scenario(t *testing.T, name string) Scenario {
	t.Helper()
	for _, s := range Scenarios() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no scenario %q", name)
	return Scenario{}
}
