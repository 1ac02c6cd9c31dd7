package scheduler

import (
	"fmt"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/queue"
)

// BenchmarkScheduleCycle measures one admission cycle over a backlog spread
// over 10 ClusterQueues, a fifth of which fits.
func BenchmarkScheduleCycle(b *testing.B) {
	for _, backlog := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("pending=%d", backlog), func(b *testing.B) {
			var cqs []*core.ClusterQueue
			for i := range 10 {
				cqs = append(cqs, coretest.GPUQueue(fmt.Sprintf("cq%d", i), coretest.GPUs("a100", int64(backlog/50)), coretest.GPUs("h100", int64(backlog/50))))
			}
			c := cacheWith(cqs, "a100", "h100")
			heads := map[string][]*core.Workload{}
			for i := range backlog {
				cq := fmt.Sprintf("cq%d", i%10)
				heads[cq] = append(heads[cq], coretest.GPUWorkload(fmt.Sprintf("w%d", i), int32(i%3), i, 1, 1))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				Schedule(c.Snapshot(), heads)
			}
		})
	}
}

// BenchmarkQueuesHeads measures collecting the heads of a large backlog.
func BenchmarkQueuesHeads(b *testing.B) {
	q := queue.NewQueues()
	for i := range 10 {
		name := fmt.Sprintf("cq%d", i)
		q.UpsertLocalQueue("ns", name, name)
		q.UpsertClusterQueue(name, core.BestEffortFIFO)
	}
	for i := range 10000 {
		w := coretest.GPUWorkload(fmt.Sprintf("w%d", i), int32(i%3), i, 1, 1)
		w.Queue = fmt.Sprintf("cq%d", i%10)
		q.AddOrUpdate(w)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_, _ = q.Heads()
	}
}
