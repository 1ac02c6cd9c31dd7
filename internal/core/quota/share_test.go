package quota

import (
	"math"
	"testing"
)

func TestShareOfHugeAmounts(t *testing.T) {
	if got := mulDiv(math.MaxInt64/2, 1000, math.MaxInt64); got != 499 {
		t.Errorf("mulDiv = %d, want 499", got)
	}
	if got := mulDiv(math.MaxInt64, 1000, 1); got != math.MaxInt64 {
		t.Errorf("mulDiv saturates: got %d", got)
	}
}
