package scheduler

import (
	"fmt"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/queue"
)

// BenchmarkCycleMatrix measures one admission cycle over the matrix the
// scheduling-core issue asks for: ClusterQueues × flavors × pending
// workloads, half of which cannot fit, in few (4) or many (up to 1,000)
// shapes, plain, with preemption, and with fair sharing. It reports ns per
// cycle (ns/op) and per admission (ns/admission).
//
//	go test ./internal/core -run XXX -bench CycleMatrix -benchtime 1x
func BenchmarkCycleMatrix(b *testing.B) {
	for _, mode := range []string{"plain", "preemption", "fairsharing"} {
		for _, queues := range []int{10, 100, 1000} {
			for _, flavors := range []int{1, 4, 16} {
				for _, pending := range []int{1_000, 10_000, 100_000} {
					for _, shapes := range []int{4, 1000} {
						name := fmt.Sprintf("%s/queues=%d/flavors=%d/pending=%d/shapes=%d", mode, queues, flavors, pending, shapes)
						b.Run(name, func(b *testing.B) { benchCycle(b, mode, queues, flavors, pending, shapes) })
					}
				}
			}
		}
	}
}

func benchCycle(b *testing.B, mode string, queues, flavors, pending, shapes int) {
	c, heads := matrixWorld(mode, queues, flavors, pending, shapes)
	runCycles(b, c, heads)
}

// runCycles runs b.N admission cycles over the heads and reports ns per
// admission and admissions per cycle.
func runCycles(b *testing.B, c *testCache, heads map[string][]*core.Workload) {
	b.ReportAllocs()
	b.ResetTimer()
	admissions := 0
	for range b.N {
		for _, d := range Schedule(c.Snapshot(), heads) {
			if d.Admission != nil {
				admissions++
			}
		}
	}
	b.StopTimer()
	if admissions > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(admissions), "ns/admission")
	}
	b.ReportMetric(float64(admissions)/float64(b.N), "admissions/op")
}

// matrixWorld builds the queues (in cohorts of up to 10), flavors and
// pending workloads. Each queue's quota holds about half of its pending
// GPUs; the other half cannot fit. With preemption, each queue is half full
// of low-priority admitted workloads that higher-priority pending ones may
// preempt.
func matrixWorld(mode string, queues, flavors, pending, shapes int) (*testCache, map[string][]*core.Workload) {
	c := newTestCache()
	var flavorNames []string
	for f := range flavors {
		name := fmt.Sprintf("f%d", f)
		flavorNames = append(flavorNames, name)
		c.UpsertFlavor(&core.Flavor{Name: name})
	}
	perQueue := pending / queues
	avgGPUs := 2 // shapes use 1..4 GPUs per pod, one pod
	quotaPerFlavor := int64(max(1, perQueue*avgGPUs/2/flavors))
	heads := map[string][]*core.Workload{}
	for i := range queues {
		name := fmt.Sprintf("cq%d", i)
		var fqs []core.FlavorQuotas
		for _, f := range flavorNames {
			fqs = append(fqs, coretest.Quotas(f, map[string]int64{"cpu": quotaPerFlavor * 8, coretest.GPU: quotaPerFlavor}))
		}
		cq := &core.ClusterQueue{Name: name, Cohort: fmt.Sprintf("cohort%d", i/10), NamespaceSelector: coretest.Everything{}, Weight: 1000,
			ResourceGroups: []core.ResourceGroup{{Resources: []string{"cpu", coretest.GPU}, Flavors: fqs}}}
		if mode == "preemption" {
			cq.Preemption = core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, ReclaimWithinCohort: core.PreemptLowerPriority}
		}
		c.UpsertClusterQueue(cq)
		if mode == "preemption" {
			for f, fl := range flavorNames {
				w := coretest.Workload(fmt.Sprintf("running-%d-%d", i, f), 0, 0, 1, map[string]int64{"cpu": quotaPerFlavor * 4, coretest.GPU: quotaPerFlavor / 2})
				c.AddOrUpdateWorkload(coretest.Admitted(w, name, fl))
			}
		}
		for j := range perQueue {
			shape := (i*perQueue + j) % shapes
			gpus := int64(1 + shape%4)
			cpu := int64(1 + shape/4%250)
			w := coretest.Workload(fmt.Sprintf("w-%d-%d", i, j), int32(j%3), j, 1, map[string]int64{"cpu": cpu, coretest.GPU: gpus})
			heads[name] = append(heads[name], w)
		}
	}
	c.cfg.FairSharing = mode == "fairsharing"
	return c, heads
}

// BenchmarkSteadyCycle measures the cycles after the first: the workloads
// that did not fit are parked, those that fit hold quota, and one new
// workload arrives per cycle. Parked workloads cost nothing, so the cycle
// grows with what is admitted (the snapshot), not with the backlog.
//
//	go test ./internal/core -run XXX -bench SteadyCycle
func BenchmarkSteadyCycle(b *testing.B) {
	for _, pending := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("queues=100/flavors=4/pending=%d/shapes=1000", pending), func(b *testing.B) {
			c, heads := matrixWorld("plain", 100, 4, pending, 1000)
			q := queue.NewQueues()
			for name, ws := range heads {
				q.UpsertLocalQueue("ns", name, name)
				q.UpsertClusterQueue(name, core.BestEffortFIFO)
				for _, w := range ws {
					w.Queue = name
					q.AddOrUpdate(w)
				}
			}
			applyCycle(c, q)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				w := coretest.GPUWorkload(fmt.Sprintf("new-%d", i), 0, 1_000_000+i, 1, 1)
				w.Queue = "cq0"
				q.AddOrUpdate(w)
				applyCycle(c, q)
			}
		})
	}
}

// applyCycle runs one cycle and applies it as the scheduler would.
func applyCycle(c *testCache, q *queue.Queues) {
	heads, seq := q.Heads()
	for _, d := range Schedule(c.Snapshot(), heads) {
		switch {
		case d.Admission != nil:
			w := *d.Workload
			w.Admission = d.Admission
			_ = c.Assume(&w)
			q.Delete(w.Key)
		case d.Park:
			q.Park(d.Workload, seq)
		}
	}
}
