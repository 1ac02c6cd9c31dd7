package scheduler

import (
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// Memory totals above 8 PiB overflowed int64 while amounts were milli-units:
// a cohort of two 6 PiB queues could not hold a 10 PiB workload.
func TestMemoryTotalsBeyondEightPiB(t *testing.T) {
	const pib = int64(1) << 50
	mem := func(name string) *core.ClusterQueue {
		return &core.ClusterQueue{Name: name, Cohort: "c", NamespaceSelector: coretest.Everything{}, Weight: 1000,
			ResourceGroups: []core.ResourceGroup{{Resources: []string{"memory"}, Flavors: []core.FlavorQuotas{
				{Flavor: "f", Resources: map[string]core.ResourceQuota{"memory": {Nominal: 6 * pib}}}}}}}
	}
	c := cacheWith([]*core.ClusterQueue{mem("a"), mem("b")}, "f")
	big := &core.Workload{Key: "ns/big", Namespace: "ns", Name: "big", Queue: "lq",
		PodSets: []core.PodSet{{Name: "main", Count: 1024, Requests: core.Requests{"memory": 10 * pib / 1024}}}}
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"a": {big}})
	if len(ds) != 1 || ds[0].Admission == nil {
		t.Fatalf("10 PiB in a 12 PiB cohort not admitted: %+v", ds)
	}
	if got := ds[0].Admission.Usage()[core.FlavorResource{Flavor: "f", Resource: "memory"}]; got != 10*pib {
		t.Errorf("usage = %d, want %d", got, 10*pib)
	}
	tooBig := &core.Workload{Key: "ns/huge", Namespace: "ns", Name: "huge", Queue: "lq",
		PodSets: []core.PodSet{{Name: "main", Count: 2, Requests: core.Requests{"memory": 7 * pib}}}}
	ds = Schedule(c.Snapshot(), map[string][]*core.Workload{"a": {tooBig}})
	if ds[0].Admission != nil || ds[0].Message() == "" {
		t.Fatalf("14 PiB admitted into 12 PiB: %+v", ds[0])
	}
	t.Log(ds[0].Message())
}
