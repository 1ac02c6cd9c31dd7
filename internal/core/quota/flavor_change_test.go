package quota

import (
	"testing"

	"github.com/musterhq/muster/internal/core"
)

// Re-applying an unchanged flavor is not a change: its queues are not
// unparked or refreshed for it (its controller runs on every finished
// admission).
func TestUpsertFlavorReportsChanges(t *testing.T) {
	c := NewCache()
	f := func(zone string) *core.Flavor {
		return &core.Flavor{Name: "a100", NodeLabels: map[string]string{"zone": zone}, Taints: []core.Taint{{Key: "gpu", Value: "true", Effect: "NoSchedule"}}}
	}
	for i, step := range []struct {
		flavor *core.Flavor
		want   bool
	}{
		{f("a"), true},  // new
		{f("a"), false}, // the same again
		{f("b"), true},  // another label
		{&core.Flavor{Name: "a100", NodeLabels: map[string]string{"zone": "b"}}, true}, // taint gone
	} {
		if got := c.UpsertFlavor(step.flavor); got != step.want {
			t.Errorf("step %d: changed = %v, want %v", i, got, step.want)
		}
	}
}
