package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// BenchmarkCycleBehindReservation: a full 16-GPU queue holding room for a
// starving 16-GPU workload, with a backlog of 1-GPU workloads of a few
// shapes behind it, half of them bounded: what one cycle costs when
// something was released and the whole backlog is tried again.
func BenchmarkCycleBehindReservation(b *testing.B) {
	for _, depth := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pending=%d", depth), func(b *testing.B) {
			c := starvationQueue(time.Hour)
			pending := []*core.Workload{coretest.GPUWorkload("big", 0, 0, 16, 1)}
			for i := range depth {
				w := coretest.GPUWorkload(fmt.Sprintf("w%d", i), int32(i%3), 60+i, 1, 1)
				if i%2 == 0 {
					w.MaxRuntime = time.Duration(10+i%4*10) * time.Minute
				}
				pending = append(pending, w)
			}
			heads := map[string][]*core.Workload{"cq": pending}
			b.ReportAllocs()
			for b.Loop() {
				s := c.Snapshot()
				s.SetNow(coretest.Epoch.Add(31 * time.Minute))
				Schedule(s, heads)
			}
		})
	}
}
