package scheduler

import (
	"maps"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

func TestAssign(t *testing.T) {
	cases := map[string]struct {
		cq         *core.ClusterQueue
		flavors    []*core.Flavor
		usage      core.Usage
		wl         *core.Workload
		wantFlavor map[string]string
		wantMsg    string
		wantNever  bool
	}{
		"fits the first flavor": {
			cq:         coretest.GPUQueue("cq", coretest.GPUs("a100", 8), coretest.GPUs("h100", 8)),
			wl:         coretest.GPUWorkload("w", 0, 0, 2, 4),
			wantFlavor: map[string]string{"nvidia.com/gpu": "a100"},
		},
		"falls through to the next flavor": {
			cq:         coretest.GPUQueue("cq", coretest.GPUs("a100", 8), coretest.GPUs("h100", 8)),
			usage:      core.Usage{{Flavor: "a100", Resource: "nvidia.com/gpu"}: 4},
			wl:         coretest.GPUWorkload("w", 0, 0, 2, 4),
			wantFlavor: map[string]string{"nvidia.com/gpu": "h100"},
		},
		"does not fit anywhere": {
			cq:      coretest.GPUQueue("cq", coretest.GPUs("a100", 8)),
			usage:   core.Usage{{Flavor: "a100", Resource: "nvidia.com/gpu"}: 2},
			wl:      coretest.GPUWorkload("w", 0, 0, 1, 16),
			wantMsg: "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor a100: 16 requested, 6 available (quota 8)",
			// 16 > quota 8: it never fits.
			wantNever: true,
		},
		"fits only after others finish": {
			cq:      coretest.GPUQueue("cq", coretest.GPUs("a100", 8)),
			usage:   core.Usage{{Flavor: "a100", Resource: "nvidia.com/gpu"}: 6},
			wl:      coretest.GPUWorkload("w", 0, 0, 1, 6),
			wantMsg: "6 requested, 2 available (quota 8)",
		},
		"resource not covered": {
			cq:        coretest.GPUQueue("cq", coretest.GPUs("a100", 8)),
			wl:        coretest.Workload("w", 0, 0, 1, map[string]int64{"nvidia.com/gpu": 1, "cpu": 2}),
			wantMsg:   "resource cpu is not covered by ClusterQueue cq",
			wantNever: true,
		},
		"untolerated taint skips the flavor": {
			cq: coretest.GPUQueue("cq", coretest.GPUs("spot", 8), coretest.GPUs("a100", 8)),
			flavors: []*core.Flavor{{Name: "spot", Taints: []core.Taint{{Key: "spot", Value: "true", Effect: "NoSchedule"}}},
				{Name: "a100"}},
			wl:         coretest.GPUWorkload("w", 0, 0, 1, 1),
			wantFlavor: map[string]string{"nvidia.com/gpu": "a100"},
		},
		"flavor toleration makes the taint acceptable": {
			cq: coretest.GPUQueue("cq", coretest.GPUs("spot", 8)),
			flavors: []*core.Flavor{{Name: "spot", Taints: []core.Taint{{Key: "spot", Value: "true", Effect: "NoSchedule"}},
				Tolerations: []core.Toleration{{Key: "spot", Operator: "Exists"}}}},
			wl:         coretest.GPUWorkload("w", 0, 0, 1, 1),
			wantFlavor: map[string]string{"nvidia.com/gpu": "spot"},
		},
		"node selector contradicts the flavor": {
			cq:      coretest.GPUQueue("cq", coretest.GPUs("a100", 8)),
			flavors: []*core.Flavor{{Name: "a100", NodeLabels: map[string]string{"gpu": "a100"}}},
			wl: func() *core.Workload {
				w := coretest.GPUWorkload("w", 0, 0, 1, 1)
				w.PodSets[0].NodeSelector = map[string]string{"gpu": "h100"}
				return w
			}(),
			wantMsg:   "flavor a100 doesn't match node selector gpu=h100",
			wantNever: true,
		},
		"missing flavor is skipped": {
			cq:         coretest.GPUQueue("cq", coretest.GPUs("gone", 8), coretest.GPUs("a100", 8)),
			flavors:    []*core.Flavor{{Name: "a100"}},
			wl:         coretest.GPUWorkload("w", 0, 0, 1, 1),
			wantFlavor: map[string]string{"nvidia.com/gpu": "a100"},
		},
		"pods are counted when covered": {
			cq: &core.ClusterQueue{Name: "cq", NamespaceSelector: coretest.Everything{}, ResourceGroups: []core.ResourceGroup{{
				Resources: []string{"cpu", "pods"}, Flavors: []core.FlavorQuotas{coretest.Quotas("default", map[string]int64{"cpu": 100, "pods": 3})}}}},
			wl:        coretest.Workload("w", 0, 0, 4, map[string]int64{"cpu": 1}),
			wantMsg:   "insufficient quota for pods in flavor default: 4 requested, 3 available (quota 3)",
			wantNever: true,
		},
		"memory is shown in binary units": {
			cq: &core.ClusterQueue{Name: "cq", NamespaceSelector: coretest.Everything{}, ResourceGroups: []core.ResourceGroup{{
				Resources: []string{"memory"}, Flavors: []core.FlavorQuotas{{Flavor: "default", Resources: map[string]core.ResourceQuota{"memory": {Nominal: 8 << 30}}}}}}},
			wl:        &core.Workload{Key: "ns/w", PodSets: []core.PodSet{{Name: "main", Count: 2, Requests: core.Requests{"memory": 8 << 30}}}},
			wantMsg:   "16Gi requested, 8Gi available (quota 8Gi)",
			wantNever: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newTestCache()
			flavors := tc.flavors
			if flavors == nil {
				for _, f := range tc.cq.FlavorNames() {
					flavors = append(flavors, &core.Flavor{Name: f})
				}
			}
			for _, f := range flavors {
				c.UpsertFlavor(f)
			}
			c.UpsertClusterQueue(tc.cq)
			s := c.Snapshot()
			q := s.Queue(tc.cq.Name)
			q.AddUsage(tc.usage)
			_ = q
			adm, mode, noFit := Assign(s, q, tc.wl)
			if tc.wantMsg != "" {
				if mode != Unfit {
					t.Fatalf("admitted %+v, want no fit", adm)
				}
				if !strings.Contains(noFit.Message(), tc.wantMsg) {
					t.Errorf("message %q does not contain %q", noFit.Message(), tc.wantMsg)
				}
				if noFit.Never != tc.wantNever {
					t.Errorf("Never = %v, want %v", noFit.Never, tc.wantNever)
				}
				return
			}
			if mode != Fit {
				t.Fatalf("no fit: %s", noFit.Message())
			}
			if !maps.Equal(adm.PodSets[0].Flavors, tc.wantFlavor) {
				t.Errorf("flavors = %v, want %v", adm.PodSets[0].Flavors, tc.wantFlavor)
			}
		})
	}
}

// TestAssignCountsEarlierPodSets: the pod sets of one workload share the
// quota; together they must fit.
func TestAssignCountsEarlierPodSets(t *testing.T) {
	c := cacheWith([]*core.ClusterQueue{coretest.GPUQueue("cq", coretest.GPUs("a100", 8), coretest.GPUs("h100", 8))}, "a100", "h100")
	s := c.Snapshot()
	w := &core.Workload{Key: "ns/w", PodSets: []core.PodSet{
		{Name: "master", Count: 1, Requests: core.Requests{"nvidia.com/gpu": 4}},
		{Name: "worker", Count: 2, Requests: core.Requests{"nvidia.com/gpu": 4}},
	}}
	adm, mode, noFit := Assign(s, s.Queue("cq"), w)
	if mode != Fit {
		t.Fatal(noFit.Message())
	}
	if got := adm.PodSets[0].Flavors["nvidia.com/gpu"]; got != "a100" {
		t.Errorf("master on %s, want a100", got)
	}
	if got := adm.PodSets[1].Flavors["nvidia.com/gpu"]; got != "h100" {
		t.Errorf("workers on %s, want h100: a100 has 4 left after the master", got)
	}
	u := adm.Usage()
	if u[core.FlavorResource{Flavor: "a100", Resource: "nvidia.com/gpu"}] != 4 || u[core.FlavorResource{Flavor: "h100", Resource: "nvidia.com/gpu"}] != 8 {
		t.Errorf("usage = %v", u)
	}
}

// TestMessageNamesTheWholeWorkload: a master and 15 workers of 1 GPU each
// against 8 GPUs: the message says the workload needs 16.
func TestMessageNamesTheWholeWorkload(t *testing.T) {
	c := cacheWith([]*core.ClusterQueue{coretest.GPUQueue("cq", coretest.GPUs("a100", 8))}, "a100")
	s := c.Snapshot()
	w := &core.Workload{Key: "ns/w", PodSets: []core.PodSet{
		{Name: "master", Count: 1, Requests: core.Requests{"nvidia.com/gpu": 1}},
		{Name: "worker", Count: 15, Requests: core.Requests{"nvidia.com/gpu": 1}},
	}}
	_, mode, noFit := Assign(s, s.Queue("cq"), w)
	if mode != Unfit {
		t.Fatal("admitted 16 GPUs into 8")
	}
	if msg := noFit.Message(); !strings.Contains(msg, "the whole workload needs 16 nvidia.com/gpu") {
		t.Errorf("message %q", msg)
	}
}

// Short of GPUs in two flavors, the whole workload still needs 16, not 32.
func TestWholeWorkloadTotalCountsAResourceOnce(t *testing.T) {
	c := cacheWith([]*core.ClusterQueue{coretest.GPUQueue("cq", coretest.GPUs("a100", 8), coretest.GPUs("h100", 8))}, "a100", "h100")
	s := c.Snapshot()
	w := &core.Workload{Key: "ns/w", PodSets: []core.PodSet{
		{Name: "master", Count: 1, Requests: core.Requests{"nvidia.com/gpu": 1}},
		{Name: "worker", Count: 15, Requests: core.Requests{"nvidia.com/gpu": 1}},
	}}
	_, _, noFit := Assign(s, s.Queue("cq"), w)
	if msg := noFit.Message(); !strings.Contains(msg, "the whole workload needs 16 nvidia.com/gpu") {
		t.Errorf("message %q", msg)
	}
}
