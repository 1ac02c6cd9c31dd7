package scheduler

import (
	"fmt"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/queue"
)

// BenchmarkPendingOrder is what one visibility request's order costs at
// 10,000 and 100,000 pending workloads over 100 LocalQueues, a quarter of
// which hold GPUs: the plain path (priority order, sorted once per change
// of the queue) against the ordered path of admission fair sharing (the
// LocalQueues' turns, through AdmissionOrders as the manager reads it),
// each read as the first page of 1,000: unchanged since the last read, and
// after a workload arrived.
func BenchmarkPendingOrder(b *testing.B) {
	for _, depth := range []int{10000, 100000} {
		for _, afs := range []bool{false, true} {
			c := afsQueue(afs)
			for i := range 25 {
				c.AddOrUpdateWorkload(coretest.Admitted(lqWl(fmt.Sprintf("held%d", i), fmt.Sprintf("lq%d", i), 0, int64(1+i%4)), "cq", "a100"))
			}
			q := queue.NewQueues()
			q.UpsertClusterQueue("cq", core.BestEffortFIFO)
			for i := range 100 {
				q.UpsertLocalQueue("ns", fmt.Sprintf("lq%d", i), "cq")
			}
			for i := range depth {
				q.AddOrUpdate(lqWl(fmt.Sprintf("w%d", i), fmt.Sprintf("lq%d", i%100), i, int64(1+i%3)))
			}
			path := map[bool]string{false: "plain", true: "ordered"}[afs]
			orders := &AdmissionOrders{Cache: c.Cache}
			b.Run(fmt.Sprintf("%d/%s/unchanged", depth, path), func(b *testing.B) {
				for b.Loop() {
					order, _ := q.Pending("cq")
					_ = orders.Order("cq", order).Page(0, 1000, nil)
				}
			})
			b.Run(fmt.Sprintf("%d/%s/changed", depth, path), func(b *testing.B) {
				i := 0
				for b.Loop() {
					i++
					q.AddOrUpdate(lqWl(fmt.Sprintf("w%d", i%depth), fmt.Sprintf("lq%d", i%100), i%depth, 2))
					order, _ := q.Pending("cq")
					_ = orders.Order("cq", order).Page(0, 1000, nil)
				}
			})
		}
	}
}
