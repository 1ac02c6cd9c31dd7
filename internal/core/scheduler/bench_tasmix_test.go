package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/topology"
)

// BenchmarkTopologyQuotaBound measures one admission cycle in the shape of
// Kueue's TAS performance mix (test/bench/configs/tas.yaml), where quota,
// not nodes, is the limit: 640 nodes of 96 cpu in 10 racks, 30
// ClusterQueues of 20 cpu in 5 cohorts that borrow up to 100, reclaim any
// and preempt lower priorities within; each queue full of admitted small
// workloads, its pending heads the mix's nine classes (small, medium and
// large, each required, preferred or balanced at rack level). Most
// decisions plan a preemption or find no quota, every cycle, which is
// what the controller repeats while the mix's backlog waits. A cycle here
// includes taking its snapshot, as the controller's does.
//
//	go test ./internal/core/scheduler -run XXX -bench TopologyQuotaBound -benchtime 10x
//
// With delay, preemptors wait the manager's default 2 s preemption delay
// first, as most cycles of a waiting preemptor do: they only ask whether
// victims exist.
func BenchmarkTopologyQuotaBound(b *testing.B) {
	for _, delay := range []time.Duration{0, 2 * time.Second} {
		for _, perClass := range []int{1, 10} {
			b.Run(fmt.Sprintf("delay=%s/pending=%d", delay, 30*9*perClass), func(b *testing.B) {
				c, heads := tasMixWorld(b, perClass)
				c.cfg.PreemptionDelay = delay
				b.ReportAllocs()
				b.ResetTimer()
				decisions := 0
				for range b.N {
					s := c.Snapshot()
					s.SetNow(coretest.Epoch.Add(time.Hour))
					decisions += len(Schedule(s, heads))
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(decisions, 1)), "ns/decision")
			})
		}
	}
}

// tasMixClass is one of the TAS mix's workload classes.
type tasMixClass struct {
	name     string
	prio     int32
	pods     int32
	milliCPU int64
}

var tasMixClasses = []tasMixClass{
	{"large", 200, 8, 2500}, {"medium", 100, 4, 1250}, {"small", 50, 2, 500},
}

func tasMixWorld(b *testing.B, perClass int) (*testCache, map[string][]*core.Workload) {
	c := newTestCache()
	c.cfg.BalancedPlacement = true
	if err := c.UpsertTopology("fabric", tasLevels); err != nil {
		b.Fatal(err)
	}
	c.UpsertFlavor(&core.Flavor{Name: "tas", NodeLabels: map[string]string{"pool": "tas"}, Topology: "fabric"})
	for i := range 640 {
		name := fmt.Sprintf("node-r%d-n%02d", i/64, i%64)
		c.SetNode(&core.Node{Name: name, Ready: true, Pods: 110, Allocatable: core.Requests{"cpu": 96_000},
			Labels: map[string]string{"pool": "tas", blockLabel: "b0", rackLabel: fmt.Sprintf("r%d", i/64), hostLabel: name}})
	}
	heads := map[string][]*core.Workload{}
	for q := range 30 {
		name := fmt.Sprintf("cq-%d-%d", q%6, q/6)
		c.UpsertClusterQueue(tasMixQueue(name, fmt.Sprintf("cohort-%d", q/6)))
		fillWithSmall(b, c, name, 20)
		heads[name] = tasMixPending(name, perClass)
	}
	return c, heads
}

func tasMixQueue(name, cohort string) *core.ClusterQueue {
	borrow := int64(100_000)
	fq := core.FlavorQuotas{Flavor: "tas", Resources: map[string]core.ResourceQuota{"cpu": {Nominal: 20_000, BorrowingLimit: &borrow}}}
	return &core.ClusterQueue{Name: name, Cohort: cohort, NamespaceSelector: coretest.Everything{}, Weight: 1000,
		ResourceGroups: []core.ResourceGroup{{Resources: []string{"cpu"}, Flavors: []core.FlavorQuotas{fq}}},
		Preemption:     core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, ReclaimWithinCohort: core.PreemptAny}}
}

// fillWithSmall admits n small required-rack workloads in the queue, as
// the controllers would record them.
func fillWithSmall(b *testing.B, c *testCache, cq string, n int) {
	var ws []*core.Workload
	for i := range n {
		ws = append(ws, tasMixWorkload(cq, "running", tasMixClasses[2], topology.Required, i))
	}
	for _, d := range Schedule(c.Snapshot(), map[string][]*core.Workload{cq: ws}) {
		if d.Admission == nil {
			b.Fatalf("%s: %s not admitted: %s", cq, d.Workload.Name, d.Message())
		}
		w := *d.Workload
		w.Admission = d.Admission
		if err := c.Assume(&w); err != nil {
			b.Fatal(err)
		}
	}
}

// tasMixPending is a queue's pending heads, highest priority first.
func tasMixPending(cq string, perClass int) []*core.Workload {
	var ws []*core.Workload
	for _, cl := range tasMixClasses {
		for _, mode := range []topology.Mode{topology.Required, topology.Preferred, topology.Unconstrained} {
			for i := range perClass {
				ws = append(ws, tasMixWorkload(cq, "pending", cl, mode, 100+i))
			}
		}
	}
	slices.SortStableFunc(ws, func(a, b *core.Workload) int { return int(b.Priority - a.Priority) })
	return ws
}

// tasMixWorkload is one workload of a class; Unconstrained stands for the
// mix's balanced requests, written as Kueue's generator writes them:
// slices of pods, each in one rack, no level for the whole set.
func tasMixWorkload(cq, what string, cl tasMixClass, mode topology.Mode, i int) *core.Workload {
	w := coretest.Workload(fmt.Sprintf("%s-%s-%s-%d-%d", cq, what, cl.name, mode, i), cl.prio, i, cl.pods, map[string]int64{})
	w.Namespace, w.Key = cq, cq+"/"+w.Name
	w.Queue = cq
	w.PodSets[0].Requests = core.Requests{"cpu": cl.milliCPU}
	w.PodSets[0].Topology = &core.TopologyRequest{Mode: mode, Level: rackLabel}
	if mode == topology.Unconstrained {
		w.PodSets[0].Topology = &core.TopologyRequest{Mode: mode, SliceLevel: rackLabel, SliceSize: max(1, cl.pods/2)}
	}
	return w
}
