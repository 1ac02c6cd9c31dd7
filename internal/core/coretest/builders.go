package coretest

import (
	"time"

	"github.com/musterhq/muster/internal/core"
)

const GPU = "nvidia.com/gpu"

var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// units is n whole units of a resource in the core's amounts: milli-cores
// for cpu, the unit itself for the rest.
func Units(res string, n int64) int64 {
	if core.MilliUnits(res) {
		return n * 1000
	}
	return n
}

// everything selects every namespace.
type Everything struct{}

func (Everything) Matches(map[string]string) bool { return true }

func GPUQueue(name string, flavors ...core.FlavorQuotas) *core.ClusterQueue {
	return &core.ClusterQueue{Name: name, NamespaceSelector: Everything{}, Weight: 1000,
		ResourceGroups: []core.ResourceGroup{{Resources: []string{"nvidia.com/gpu"}, Flavors: flavors}}}
}

func Quotas(flavor string, res map[string]int64) core.FlavorQuotas {
	fq := core.FlavorQuotas{Flavor: flavor, Resources: map[string]core.ResourceQuota{}}
	for r, v := range res {
		fq.Resources[r] = core.ResourceQuota{Nominal: Units(r, v)}
	}
	return fq
}

func GPUs(flavor string, n int64) core.FlavorQuotas {
	return Quotas(flavor, map[string]int64{"nvidia.com/gpu": n})
}

// wl is a workload of one pod set of count pods with per-pod whole units.
func Workload(name string, prio int32, age int, count int32, req map[string]int64) *core.Workload {
	r := core.Requests{}
	for k, v := range req {
		r[k] = Units(k, v)
	}
	return &core.Workload{
		Key: "ns/" + name, Namespace: "ns", Name: name, Queue: "lq", Priority: prio,
		Created: Epoch.Add(time.Duration(age) * time.Second),
		PodSets: []core.PodSet{{Name: "main", Count: count, Requests: r}},
	}
}

func GPUWorkload(name string, prio int32, age int, count int32, perPod int64) *core.Workload {
	return Workload(name, prio, age, count, map[string]int64{"nvidia.com/gpu": perPod})
}

func Admitted(w *core.Workload, cq, flavor string) *core.Workload {
	out := *w
	u := core.Requests{}
	for r, v := range w.PodSets[0].Requests {
		u[r] = v * int64(w.PodSets[0].Count)
	}
	fl := map[string]string{}
	for r := range u {
		fl[r] = flavor
	}
	out.Admission = &core.Admission{ClusterQueue: cq, PodSets: []core.PodSetAssignment{{Name: "main", Count: w.PodSets[0].Count, Flavors: fl, Usage: u}}}
	return &out
}
