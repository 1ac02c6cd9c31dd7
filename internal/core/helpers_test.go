package core

import (
	"time"
)

// Test builders for the core's model.

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// units is n whole units of a resource in the core's amounts: milli-cores
// for cpu, the unit itself for the rest.
func units(res string, n int64) int64 {
	if MilliUnits(res) {
		return n * 1000
	}
	return n
}

// everything selects every namespace.
type everything struct{}

func (everything) Matches(map[string]string) bool { return true }

func gpuQueue(name string, flavors ...FlavorQuotas) *ClusterQueue {
	return &ClusterQueue{Name: name, NamespaceSelector: everything{}, Weight: 1000,
		ResourceGroups: []ResourceGroup{{Resources: []string{"nvidia.com/gpu"}, Flavors: flavors}}}
}

func quotas(flavor string, res map[string]int64) FlavorQuotas {
	fq := FlavorQuotas{Flavor: flavor, Resources: map[string]ResourceQuota{}}
	for r, v := range res {
		fq.Resources[r] = ResourceQuota{Nominal: units(r, v)}
	}
	return fq
}

func gpus(flavor string, n int64) FlavorQuotas {
	return quotas(flavor, map[string]int64{"nvidia.com/gpu": n})
}

// wl is a workload of one pod set of count pods with per-pod whole units.
func wl(name string, prio int32, age int, count int32, req map[string]int64) *Workload {
	r := Requests{}
	for k, v := range req {
		r[k] = units(k, v)
	}
	return &Workload{
		Key: "ns/" + name, Namespace: "ns", Name: name, Queue: "lq", Priority: prio,
		Created: epoch.Add(time.Duration(age) * time.Second),
		PodSets: []PodSet{{Name: "main", Count: count, Requests: r}},
	}
}

func gpuWl(name string, prio int32, age int, count int32, perPod int64) *Workload {
	return wl(name, prio, age, count, map[string]int64{"nvidia.com/gpu": perPod})
}

func cacheWith(cqs []*ClusterQueue, flavors ...string) *Cache {
	c := NewCache()
	for _, f := range flavors {
		c.UpsertFlavor(&Flavor{Name: f})
	}
	for _, cq := range cqs {
		c.UpsertClusterQueue(cq)
	}
	return c
}

func admitted(w *Workload, cq, flavor string) *Workload {
	out := *w
	u := Requests{}
	for r, v := range w.PodSets[0].Requests {
		u[r] = v * int64(w.PodSets[0].Count)
	}
	fl := map[string]string{}
	for r := range u {
		fl[r] = flavor
	}
	out.Admission = &Admission{ClusterQueue: cq, PodSets: []PodSetAssignment{{Name: "main", Count: w.PodSets[0].Count, Flavors: fl, Usage: u}}}
	return &out
}

func names(ds []Decision, admittedOnly bool) []string {
	var out []string
	for _, d := range ds {
		if !admittedOnly || d.Admission != nil {
			out = append(out, d.Workload.Name)
		}
	}
	return out
}

func time_(s int) time.Duration { return time.Duration(s) * time.Second }

var timeFromInt = time_
