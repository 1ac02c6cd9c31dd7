package core

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestAmountsRoundTrip(t *testing.T) {
	cases := map[string]struct {
		res, quantity string
		amount        int64
		shown         string
	}{
		"cpu in milli-cores":               {"cpu", "1500m", 1500, "1500m"},
		"whole cpus":                       {"cpu", "4", 4000, "4"},
		"memory in bytes":                  {"memory", "16Gi", 16 << 30, "16Gi"},
		"memory beyond 8 PiB":              {"memory", "4000Pi", 4000 << 50, "4000Pi"},
		"devices":                          {"nvidia.com/gpu", "8", 8, "8"},
		"a fraction of a unit counts as 1": {"example.com/foo", "500m", 1, "1"},
		"ephemeral storage is binary":      {"ephemeral-storage", "1Ti", 1 << 40, "1Ti"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Amount(tc.res, resource.MustParse(tc.quantity))
			if got != tc.amount {
				t.Fatalf("Amount = %d, want %d", got, tc.amount)
			}
			if s := Format(tc.res, got); s != tc.shown {
				t.Errorf("Format = %s, want %s", s, tc.shown)
			}
		})
	}
}
