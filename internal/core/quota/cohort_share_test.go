package quota

import (
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// A cohort's share, computed from its tree's quota alone, is the one a
// whole snapshot gives; a cohort no queue names has none.
func TestCohortShareIsTheSnapshots(t *testing.T) {
	c := NewCache()
	c.UpsertFlavor(&core.Flavor{Name: "a100"})
	c.UpsertCohort(&core.Cohort{Name: "root", Weight: 1000})
	c.UpsertCohort(&core.Cohort{Name: "org", Parent: "root", Weight: 1000})
	for _, q := range []struct{ name, cohort string }{{"a", "org"}, {"b", "root"}, {"alone", ""}} {
		cq := coretest.GPUQueue(q.name, coretest.GPUs("a100", 4))
		cq.Cohort = q.cohort
		c.UpsertClusterQueue(cq)
	}
	c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("w", 0, 0, 6, 1), "a", "a100"))
	got, ok := c.CohortShare("org")
	if want := c.Snapshot().Cohorts["org"].Share(); !ok || got != want || got == 0 {
		t.Errorf("CohortShare(org) = %d, %v; want the snapshot's %d, not 0", got, ok, want)
	}
	if _, ok := c.CohortShare("nobody"); ok {
		t.Error("a cohort no queue names has a share")
	}
}
