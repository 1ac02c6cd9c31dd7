package scheduler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/topology"
)

// Fixtures for topology placement: a cluster of blocks × racks × nodes of
// 8 GPUs each, labelled block, rack and hostname, behind one flavor "tas".

const (
	blockLabel = "example.com/block"
	rackLabel  = "example.com/rack"
	hostLabel  = topology.HostnameLabel
	gpu        = "nvidia.com/gpu"
)

var tasLevels = []string{blockLabel, rackLabel, hostLabel}

// tasCache returns a cache with the topology "fabric", the flavor "tas" on
// it, the queues, and blocks×racks×nodes nodes of 8 GPUs.
func tasCache(t *testing.T, blocks, racks, nodes int, cqs ...*core.ClusterQueue) *testCache {
	t.Helper()
	c := newTestCache()
	if err := c.UpsertTopology("fabric", tasLevels); err != nil {
		t.Fatal(err)
	}
	c.UpsertFlavor(&core.Flavor{Name: "tas", NodeLabels: map[string]string{"pool": "tas"}, Topology: "fabric", Pinned: true})
	for _, cq := range cqs {
		c.UpsertClusterQueue(cq)
	}
	for b := 1; b <= blocks; b++ {
		for r := 1; r <= racks; r++ {
			for n := 1; n <= nodes; n++ {
				c.SetNode(gpuNode(fmt.Sprintf("b%d-r%d-n%d", b, r, n), 8))
			}
		}
	}
	return c
}

// gpuNode is a Ready node named b<i>-r<j>-n<k>, labelled from its name.
func gpuNode(name string, gpus int64) *core.Node {
	var b, r, n int
	_, _ = fmt.Sscanf(name, "b%d-r%d-n%d", &b, &r, &n)
	return &core.Node{
		Name: name, Ready: true, Pods: 110,
		Labels: map[string]string{
			"pool": "tas", blockLabel: fmt.Sprintf("b%d", b), rackLabel: fmt.Sprintf("b%d-r%d", b, r), hostLabel: name,
		},
		Allocatable: core.Requests{gpu: gpus, "cpu": 96_000},
	}
}

// tasWl is a workload of count pods of perPod GPUs with a topology request.
func tasWl(name string, prio int32, age int, count int32, perPod int64, mode topology.Mode, level string) *core.Workload {
	w := coretest.GPUWorkload(name, prio, age, count, perPod)
	w.PodSets[0].Topology = &core.TopologyRequest{Mode: mode, Level: level}
	return w
}

func tasQueue(name string, quota int64) *core.ClusterQueue {
	return coretest.GPUQueue(name, coretest.GPUs("tas", quota))
}

// admitIn runs one cycle over the heads and records what it admits in
// the cache, as the controllers would.
func admitIn(t *testing.T, c *testCache, heads map[string][]*core.Workload) []Decision {
	t.Helper()
	ds := Schedule(c.Snapshot(), heads)
	for _, d := range ds {
		if d.Admission != nil && d.Workload.Admission == nil {
			w := *d.Workload
			w.Admission = d.Admission
			if err := c.Assume(&w); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ds
}

func decisionOf(ds []Decision, name string) *Decision {
	i := slices.IndexFunc(ds, func(d Decision) bool { return d.Workload.Name == name })
	if i < 0 {
		return nil
	}
	return &ds[i]
}

// racksOf lists the distinct racks of a decision's placement.
func racksOf(t *testing.T, d *Decision) []string {
	t.Helper()
	if d == nil || d.Admission == nil {
		t.Fatalf("not admitted: %+v", d)
	}
	var racks []string
	for _, ps := range d.Admission.PodSets {
		if ps.Placement == nil {
			t.Fatalf("pod set %s has no placement", ps.Name)
		}
		for _, dom := range ps.Placement.Domains {
			if r := dom.Values[1]; !slices.Contains(racks, r) {
				racks = append(racks, r)
			}
		}
	}
	slices.Sort(racks)
	return racks
}

// podsPlaced sums a decision's placed pods per node.
func podsPlaced(d *Decision) map[string]int32 {
	out := map[string]int32{}
	for _, ps := range d.Admission.PodSets {
		if ps.Placement != nil {
			for _, n := range ps.Placement.Nodes {
				out[n.Name] += n.Count
			}
		}
	}
	return out
}
