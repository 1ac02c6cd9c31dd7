package scheduler

import (
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// partialWl is a one-pod-set GPU workload that may start with min pods.
func partialWl(name string, count, min int32, perPod int64) *core.Workload {
	w := coretest.GPUWorkload(name, 0, 0, count, perPod)
	w.PodSets[0].MinCount = min
	return w
}

func TestAssignPartial(t *testing.T) {
	cases := map[string]struct {
		quota     int64
		used      int64
		wl        *core.Workload
		wantCount []int32 // nil: no admission
	}{
		"the most pods that fit": {quota: 24, used: 12, wl: partialWl("w", 16, 4, 1), wantCount: []int32{12}},
		"exactly the minimum":    {quota: 24, used: 20, wl: partialWl("w", 16, 4, 1), wantCount: []int32{4}},
		"below the minimum":      {quota: 24, used: 21, wl: partialWl("w", 16, 4, 1)},
		"whole pods only":        {quota: 24, used: 13, wl: partialWl("w", 16, 2, 2), wantCount: []int32{5}},
		"no minimum, no partial": {quota: 24, used: 12, wl: coretest.GPUWorkload("w", 0, 0, 16, 1)},
		"a thousand pods":        {quota: 1000, used: 1, wl: partialWl("w", 1000, 1, 1), wantCount: []int32{999}},
		"pod sets shrink by the same share": {quota: 20, wl: func() *core.Workload {
			w := coretest.GPUWorkload("w", 0, 0, 8, 1)
			w.PodSets[0].MinCount = 4
			w.PodSets = append(w.PodSets, core.PodSet{Name: "workers", Count: 16, MinCount: 8, Requests: w.PodSets[0].Requests})
			return w
		}(), wantCount: []int32{6, 13}},
		"a pod set without minimum keeps its count": {quota: 20, wl: func() *core.Workload {
			w := coretest.GPUWorkload("w", 0, 0, 1, 1)
			w.PodSets = append(w.PodSets, core.PodSet{Name: "workers", Count: 32, MinCount: 2, Requests: w.PodSets[0].Requests})
			return w
		}(), wantCount: []int32{1, 19}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := cacheWith([]*core.ClusterQueue{coretest.GPUQueue("cq", coretest.GPUs("a100", tc.quota))}, "a100")
			s := c.Snapshot()
			q := s.Queue("cq")
			q.AddUsage(core.Usage{{Flavor: "a100", Resource: "nvidia.com/gpu"}: coretest.Units("nvidia.com/gpu", tc.used)})
			adm, _ := AssignPartial(s, q, tc.wl)
			var got []int32
			if adm != nil {
				for _, ps := range adm.PodSets {
					got = append(got, ps.Count)
				}
			}
			if !slices.Equal(got, tc.wantCount) {
				t.Errorf("counts %v, want %v", got, tc.wantCount)
			}
		})
	}
}

func TestScheduleAdmitsPartiallyAndSaysWhyNot(t *testing.T) {
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 24))
	cases := map[string]struct {
		wl          *core.Workload
		wantCount   int32
		wantMessage string
	}{
		"starts with what fits":   {wl: partialWl("w", 32, 8, 1), wantCount: 24},
		"full count when it fits": {wl: partialWl("w", 16, 8, 1), wantCount: 16},
		"asks for all of them": {wl: coretest.GPUWorkload("w", 0, 0, 32, 1),
			wantMessage: "24 of the 32 pods of pod set main would fit now, but the job may not start with fewer than all"},
		"not even its minimum": {wl: partialWl("w", 64, 30, 1),
			wantMessage: "not even the 30 pods pod set main may start with fit"},
		"one pod gets no hint": {wl: coretest.GPUWorkload("w", 0, 0, 1, 30), wantMessage: "30 requested, 24 available (quota 24)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := cacheWith([]*core.ClusterQueue{cq}, "a100")
			ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {tc.wl}})
			if len(ds) != 1 {
				t.Fatalf("%d decisions", len(ds))
			}
			d := ds[0]
			if tc.wantMessage != "" {
				if d.Admission != nil {
					t.Fatalf("admitted %d pods, want pending", d.Admission.PodSets[0].Count)
				}
				if msg := d.Message(); !strings.Contains(msg, tc.wantMessage) {
					t.Errorf("message %q, want it to contain %q", msg, tc.wantMessage)
				}
				if strings.Contains(tc.wantMessage, "requested") && strings.Contains(d.Message(), "would fit") {
					t.Errorf("hint for a one-pod set: %q", d.Message())
				}
				return
			}
			if d.Admission == nil {
				t.Fatalf("not admitted: %s", d.Message())
			}
			if got := d.Admission.PodSets[0].Count; got != tc.wantCount {
				t.Errorf("admitted %d pods, want %d", got, tc.wantCount)
			}
			if got, want := d.Admission.Usage()[core.FlavorResource{Flavor: "a100", Resource: "nvidia.com/gpu"}], coretest.Units("nvidia.com/gpu", int64(tc.wantCount)); got != want {
				t.Errorf("usage %d, want %d", got, want)
			}
		})
	}
}
