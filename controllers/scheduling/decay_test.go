package scheduling

import (
	"math"
	"testing"
	"time"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
)

// TestDecayedStatusRoundTrip: what the status keeps reads back as it was,
// to a thousandth of a unit (cpu in millicores already), so a restart
// continues from it.
func TestDecayedStatusRoundTrip(t *testing.T) {
	gpu := core.FlavorResource{Flavor: "a100", Resource: "nvidia.com/gpu"}
	cpu := core.FlavorResource{Flavor: "a100", Resource: "cpu"}
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	in := quota.DecayedUsage{Usage: map[core.FlavorResource]float64{gpu: 0.3075, cpu: 1500.4}, At: at}
	usage, sampled := decayedStatus(in)
	out, ok := decayedFromStatus(&musterv1beta1.FairSharingStatus{DecayedUsage: usage, LastSampled: sampled})
	if !ok || !out.At.Equal(at) {
		t.Fatalf("read back %+v", out)
	}
	if math.Abs(out.Usage[gpu]-0.308) > 1e-9 || math.Abs(out.Usage[cpu]-1500) > 1e-9 {
		t.Errorf("read back %v", out.Usage)
	}
	if _, ok := decayedFromStatus(&musterv1beta1.FairSharingStatus{}); ok {
		t.Error("a status never sampled has nothing to restore")
	}
}
