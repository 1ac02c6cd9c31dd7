package scheduler

import (
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// TestScheduleStopsAtTheAdmissionLimit: a cycle limited to n admissions
// decides the n most important that fit and leaves the rest undecided —
// not parked, no reason — for the next cycle, with or without fair sharing.
func TestScheduleStopsAtTheAdmissionLimit(t *testing.T) {
	heads := func() map[string][]*core.Workload {
		return map[string][]*core.Workload{
			"a": {coretest.GPUWorkload("a-low", 0, 1, 1, 1), coretest.GPUWorkload("a-high", 10, 2, 1, 1), coretest.GPUWorkload("a-too-big", 20, 3, 1, 100)},
			"b": {coretest.GPUWorkload("b-mid", 5, 4, 1, 1), coretest.GPUWorkload("b-low", 0, 5, 1, 1)},
		}
	}
	cases := map[string]struct {
		limit        int
		fair         bool
		wantAdmitted []string
		wantDecided  int
	}{
		"no limit":                            {limit: 0, wantAdmitted: []string{"a-high", "a-low", "b-low", "b-mid"}, wantDecided: 5},
		"two: highest priority first":         {limit: 2, wantAdmitted: []string{"a-high", "b-mid"}, wantDecided: 3},
		"one":                                 {limit: 1, wantAdmitted: []string{"a-high"}, wantDecided: 2},
		"more than fit":                       {limit: 10, wantAdmitted: []string{"a-high", "a-low", "b-low", "b-mid"}, wantDecided: 5},
		"fair sharing, two: trees take turns": {limit: 2, fair: true, wantAdmitted: []string{"a-high", "b-mid"}, wantDecided: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := cacheWith([]*core.ClusterQueue{coretest.GPUQueue("a", coretest.GPUs("a100", 8)), coretest.GPUQueue("b", coretest.GPUs("a100", 8))}, "a100")
			c.cfg.FairSharing = tc.fair
			s := c.Snapshot()
			s.LimitAdmissions(tc.limit)
			ds := Schedule(s, heads())
			got := names(ds, true)
			if tc.wantAdmitted != nil {
				slices.Sort(got)
				if !slices.Equal(got, tc.wantAdmitted) {
					t.Errorf("admitted %v, want %v", got, tc.wantAdmitted)
				}
			}
			if tc.limit > 0 && len(got) > tc.limit {
				t.Errorf("admitted %d, limit %d", len(got), tc.limit)
			}
			if len(ds) != tc.wantDecided {
				t.Errorf("%d decisions, want %d: %v", len(ds), tc.wantDecided, names(ds, false))
			}
			for _, d := range ds {
				if d.Admission == nil && d.Park && d.Workload.Name != "a-too-big" {
					t.Errorf("%s parked", d.Workload.Name)
				}
			}
		})
	}
}
