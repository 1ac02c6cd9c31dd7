package core

import (
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Memory totals above 8 PiB overflowed int64 while amounts were milli-units:
// a cohort of two 6 PiB queues could not hold a 10 PiB workload.
func TestMemoryTotalsBeyondEightPiB(t *testing.T) {
	const pib = int64(1) << 50
	mem := func(name string) *ClusterQueue {
		return &ClusterQueue{Name: name, Cohort: "c", NamespaceSelector: everything{}, Weight: 1000,
			ResourceGroups: []ResourceGroup{{Resources: []string{"memory"}, Flavors: []FlavorQuotas{
				{Flavor: "f", Resources: map[string]ResourceQuota{"memory": {Nominal: 6 * pib}}}}}}}
	}
	c := cacheWith([]*ClusterQueue{mem("a"), mem("b")}, "f")
	big := &Workload{Key: "ns/big", Namespace: "ns", Name: "big", Queue: "lq",
		PodSets: []PodSet{{Name: "main", Count: 1024, Requests: Requests{"memory": 10 * pib / 1024}}}}
	ds := Schedule(c.Snapshot(), map[string][]*Workload{"a": {big}})
	if len(ds) != 1 || ds[0].Admission == nil {
		t.Fatalf("10 PiB in a 12 PiB cohort not admitted: %+v", ds)
	}
	if got := ds[0].Admission.Usage()[FlavorResource{"f", "memory"}]; got != 10*pib {
		t.Errorf("usage = %d, want %d", got, 10*pib)
	}
	tooBig := &Workload{Key: "ns/huge", Namespace: "ns", Name: "huge", Queue: "lq",
		PodSets: []PodSet{{Name: "main", Count: 2, Requests: Requests{"memory": 7 * pib}}}}
	ds = Schedule(c.Snapshot(), map[string][]*Workload{"a": {tooBig}})
	if ds[0].Admission != nil || ds[0].Message() == "" {
		t.Fatalf("14 PiB admitted into 12 PiB: %+v", ds[0])
	}
	t.Log(ds[0].Message())
}

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

func TestShareOfHugeAmounts(t *testing.T) {
	if got := mulDiv(math.MaxInt64/2, 1000, math.MaxInt64); got != 499 {
		t.Errorf("mulDiv = %d, want 499", got)
	}
	if got := mulDiv(math.MaxInt64, 1000, 1); got != math.MaxInt64 {
		t.Errorf("mulDiv saturates: got %d", got)
	}
}
