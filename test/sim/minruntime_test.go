package sim

import "testing"

// TestMinRuntimeProtectsVictims: with a 30-minute minimum runtime no
// victim had run less than that; without one, some had (the bursts hit
// the long jobs they had just let restart), so the knob is exercised.
func TestMinRuntimeProtectsVictims(t *testing.T) {
	rows := MinRuntimeNumbers(results(t, "minruntime"))
	without, with := rows[0], rows[1]
	if with.YoungVictims != 0 {
		t.Errorf("%s: %d victims had run less than %s", with.Variant, with.YoungVictims, MinRuntimeSetting)
	}
	if without.YoungVictims == 0 {
		t.Errorf("%s: no victim had run less than %s; the trace does not exercise the knob", without.Variant, MinRuntimeSetting)
	}
	if without.Preemptions == 0 || with.Preemptions == 0 {
		t.Errorf("no preemptions: %+v", rows)
	}
}
