package scheduler

import (
	"fmt"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/quota"
)

// BenchmarkNodeFitCycle is BenchmarkScheduleCycle's backlog (10
// ClusterQueues, a fifth of it fits) with the flavors quota-only (node fit
// None: the cycle Kueue runs for a flavor without a topology) and with
// node fit Check over 8-GPU nodes that hold every flavor's quota, so both
// admit the same: what it costs to check the nodes.
//
//	go test ./internal/core -run XXX -bench NodeFitCycle -benchtime 20x
func BenchmarkNodeFitCycle(b *testing.B) {
	for _, backlog := range []int{1000, 10000} {
		for _, fit := range []bool{false, true} {
			name := "quota-only"
			if fit {
				name = "node-fit"
			}
			b.Run(fmt.Sprintf("pending=%d/%s", backlog, name), func(b *testing.B) {
				c, heads := nodeFitWorld(backlog, fit)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					Schedule(c.Snapshot(), heads)
				}
			})
		}
	}
}

func nodeFitWorld(backlog int, fit bool) (*testCache, map[string][]*core.Workload) {
	perQueue := int64(backlog / 50)
	var cqs []*core.ClusterQueue
	for i := range 10 {
		cqs = append(cqs, coretest.GPUQueue(fmt.Sprintf("cq%d", i), coretest.GPUs("a100", perQueue), coretest.GPUs("h100", perQueue)))
	}
	c := cacheWith(cqs)
	for _, f := range []string{"a100", "h100"} {
		fl := &core.Flavor{Name: f, NodeLabels: map[string]string{"gpu": f}}
		if fit {
			fl.Topology = quota.NodesTopology
		}
		c.UpsertFlavor(fl)
		for n := range int(10*perQueue/8) + 1 {
			name := fmt.Sprintf("%s-%d", f, n)
			c.SetNode(&core.Node{Name: name, Ready: true, Pods: 110, Allocatable: core.Requests{gpu: 8, "cpu": 96_000},
				Labels: map[string]string{"gpu": f, hostLabel: name}})
		}
	}
	heads := map[string][]*core.Workload{}
	for i := range backlog {
		cq := fmt.Sprintf("cq%d", i%10)
		heads[cq] = append(heads[cq], coretest.GPUWorkload(fmt.Sprintf("w%d", i), int32(i%3), i, 1, 1))
	}
	return c, heads
}

// TestNodeFitWorldAdmitsAsQuotaOnly: the benchmark compares like with
// like — node fit admits exactly what quota alone does there.
func TestNodeFitWorldAdmitsAsQuotaOnly(t *testing.T) {
	count := func(fit bool) int {
		c, heads := nodeFitWorld(1000, fit)
		n := 0
		for _, d := range Schedule(c.Snapshot(), heads) {
			if d.AdmitsPending() {
				n++
			}
		}
		return n
	}
	if q, f := count(false), count(true); q != f || q == 0 {
		t.Errorf("quota only admits %d, node fit %d", q, f)
	}
}
