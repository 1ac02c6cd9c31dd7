package sim

import "testing"

// TestDecayServesTheDayTeam: once "day" joins at hour 8, usage-decayed
// fair sharing counts "night"'s night against it, so "day" gets more of
// the GPUs that free in hours 8-12 than when only current usage counts.
func TestDecayServesTheDayTeam(t *testing.T) {
	n := DecayNumbers(results(t, "decay"))
	current, decayed := n[0], n[1]
	if decayed.Day <= current.Day {
		t.Errorf("day's GPU-hours in hours 8-12: %.1f with decay, %.1f without; want more with decay", decayed.Day, current.Day)
	}
	if current.Night+current.Day == 0 || decayed.Night+decayed.Day == 0 {
		t.Errorf("nothing ran in hours 8-12: %+v", n)
	}
}

// TestDecayScenarioDoesNotPreempt: neither team reclaims in the decay
// scenario, so what it measures is only who gets the GPUs that free.
func TestDecayScenarioDoesNotPreempt(t *testing.T) {
	for _, r := range results(t, "decay") {
		if r.Preemptions != 0 {
			t.Errorf("%s: %d preemptions", r.Name, r.Preemptions)
		}
	}
}
