package scheduler

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/topology"
)

// BenchmarkTopologyCycle measures one admission cycle with topology
// placement at the sizes issue 14 asks for: 1,300, 5,000 and 20,000 nodes
// of 8 GPUs (racks of 32 nodes, blocks of 8 racks), 30 ClusterQueues in 5
// cohorts with fair sharing on, and 500 or 10,000 pending workloads: a
// third 4 × 8 GPUs requiring one rack, a third 2 × 4 preferring one, a
// third 1 × 2 unconstrained. Quota is not the limit; nodes are. It reports
// ns per admission; admissions per second are 1e9 / that.
//
//	go test ./internal/core -run XXX -bench TopologyCycle -benchtime 3x
func BenchmarkTopologyCycle(b *testing.B) {
	for _, nodes := range []int{1_300, 5_000, 20_000} {
		for _, pending := range []int{500, 10_000} {
			b.Run(fmt.Sprintf("nodes=%d/pending=%d", nodes, pending), func(b *testing.B) {
				c, heads := topologyWorld(nodes, pending)
				runCycles(b, c, heads)
			})
		}
	}
}

func topologyWorld(nodes, pending int) (*testCache, map[string][]*core.Workload) {
	c := newTestCache()
	c.cfg.FairSharing = true
	_ = c.UpsertTopology("fabric", tasLevels)
	c.UpsertFlavor(&core.Flavor{Name: "tas", NodeLabels: map[string]string{"pool": "tas"}, Topology: "fabric"})
	for i := range nodes {
		rack, block := i/32, i/256
		name := fmt.Sprintf("n%05d", i)
		c.SetNode(&core.Node{Name: name, Ready: true, Pods: 110, Allocatable: core.Requests{gpu: 8},
			Labels: map[string]string{"pool": "tas", blockLabel: fmt.Sprintf("b%03d", block), rackLabel: fmt.Sprintf("r%04d", rack), hostLabel: name}})
	}
	heads := map[string][]*core.Workload{}
	for q := range 30 {
		cq := tasQueue(fmt.Sprintf("cq%02d", q), int64(nodes*8))
		cq.Cohort = fmt.Sprintf("co%d", q/6)
		c.UpsertClusterQueue(cq)
	}
	for i := range pending {
		q := fmt.Sprintf("cq%02d", i%30)
		var w *core.Workload
		switch i % 3 {
		case 0:
			w = tasWl(fmt.Sprintf("w%d", i), int32(i%4), i, 4, 8, topology.Required, rackLabel)
		case 1:
			w = tasWl(fmt.Sprintf("w%d", i), int32(i%4), i, 2, 4, topology.Preferred, rackLabel)
		default:
			w = tasWl(fmt.Sprintf("w%d", i), int32(i%4), i, 1, 2, topology.Unconstrained, "")
		}
		heads[q] = append(heads[q], w)
	}
	return c, heads
}

// BenchmarkCapacityMemory measures what the core keeps for node capacity
// at the scale issue 14 names: 10,000 nodes and 100,000 bound pods (10 per
// node, a tenth of them of admitted topology workloads), one topology. It
// reports the heap the cache holds for them and the cost of a pod event.
//
//	go test ./internal/core -run XXX -bench CapacityMemory -benchtime 1x
func BenchmarkCapacityMemory(b *testing.B) {
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c := newTestCache()
		_ = c.UpsertTopology("fabric", tasLevels)
		for i := range 10_000 {
			name := fmt.Sprintf("n%05d", i)
			c.SetNode(&core.Node{Name: name, Ready: true, Pods: 110, Allocatable: core.Requests{gpu: 8, "cpu": 96_000, "memory": 512 << 30},
				Labels: map[string]string{"pool": "tas", blockLabel: fmt.Sprintf("b%03d", i/256), rackLabel: fmt.Sprintf("r%04d", i/32), hostLabel: name}})
		}
		start := time.Now()
		for i := range 100_000 {
			p := &core.Pod{Node: fmt.Sprintf("n%05d", i%10_000), Requests: core.Requests{"cpu": 500, "memory": 1 << 30}}
			if i%10 == 0 {
				p.Workload = fmt.Sprintf("ns/w%d", i/100)
			}
			c.SetPod(fmt.Sprintf("ns/p%06d", i), p)
		}
		perPod := time.Since(start) / 100_000
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB")
		b.ReportMetric(float64(perPod.Nanoseconds()), "ns/pod-event")
		runtime.KeepAlive(c)
	}
}
