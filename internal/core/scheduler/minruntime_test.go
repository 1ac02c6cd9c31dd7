package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// minRuntimeQueue is a 4-GPU queue preempting lower priority within
// itself, whose workloads run min before they may be preempted, holding a
// low-priority workload admitted at admittedAt.
func minRuntimeQueue(min time.Duration, admittedAt time.Time) *testCache {
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 4))
	cq.Preemption = core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, MinRuntime: min}
	c := cacheWith([]*core.ClusterQueue{cq}, "a100")
	low := coretest.Admitted(coretest.GPUWorkload("low", 0, 0, 4, 1), "cq", "a100")
	low.AdmittedAt = admittedAt
	c.AddOrUpdateWorkload(low)
	return c
}

// TestMinRuntimeProtectsVictims: a higher-priority workload does not
// preempt one that has not run its queue's minimum runtime; it waits, says
// for whom and how long, and asks to be tried again then; once the runtime
// has passed it preempts.
func TestMinRuntimeProtectsVictims(t *testing.T) {
	admittedAt := coretest.Epoch
	c := minRuntimeQueue(10*time.Minute, admittedAt)
	high := coretest.GPUWorkload("high", 100, 1, 4, 1)

	s := c.Snapshot()
	s.SetNow(admittedAt.Add(4 * time.Minute))
	d := Schedule(s, map[string][]*core.Workload{"cq": {high}})[0]
	if len(d.Victims) != 0 {
		t.Fatalf("preempted within the minimum runtime: %v", d.Victims)
	}
	if d.Pending.Kind != core.VictimsInMinRuntime || d.RetryAfter != 6*time.Minute {
		t.Fatalf("pending %v, retry after %s; want VictimsInMinRuntime in 6m", d.Pending.Kind, d.RetryAfter)
	}
	if msg := d.Message(); !strings.Contains(msg, "ns/low") || !strings.Contains(msg, "minimum runtime") || !strings.Contains(msg, "6m0s") {
		t.Errorf("message %q", msg)
	}

	s = c.Snapshot()
	s.SetNow(admittedAt.Add(10 * time.Minute))
	d = Schedule(s, map[string][]*core.Workload{"cq": {high}})[0]
	if len(d.Victims) != 1 || d.Victims[0].Workload.Key != "ns/low" {
		t.Fatalf("after the minimum runtime: victims %v, pending %s", d.Victims, d.Message())
	}
}

// TestMinRuntimeZeroIsKueue: without a minimum runtime the victim goes at
// once, as in Kueue.
func TestMinRuntimeZeroIsKueue(t *testing.T) {
	c := minRuntimeQueue(0, coretest.Epoch)
	s := c.Snapshot()
	s.SetNow(coretest.Epoch.Add(time.Second))
	d := Schedule(s, map[string][]*core.Workload{"cq": {coretest.GPUWorkload("high", 100, 1, 4, 1)}})[0]
	if len(d.Victims) != 1 {
		t.Fatalf("victims %v, pending %s", d.Victims, d.Message())
	}
}

// TestMinRuntimeNeverViolated (property): whatever the admission times,
// minimum runtimes and the cycle's time, no victim chosen has run less
// than its queue's minimum runtime.
func TestMinRuntimeNeverViolated(t *testing.T) {
	for i := range 500 {
		min := time.Duration(i%7) * time.Minute
		cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 8))
		cq.Preemption = core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, MinRuntime: min}
		c := cacheWith([]*core.ClusterQueue{cq}, "a100")
		for j := range 4 {
			w := coretest.Admitted(coretest.GPUWorkload("low"+string(rune('a'+j)), 0, j, 2, 1), "cq", "a100")
			w.AdmittedAt = coretest.Epoch.Add(time.Duration((i*7+j*3)%11) * time.Minute)
			c.AddOrUpdateWorkload(w)
		}
		s := c.Snapshot()
		now := coretest.Epoch.Add(time.Duration(10+i%13) * time.Minute) // after every admission
		s.SetNow(now)
		for _, d := range Schedule(s, map[string][]*core.Workload{"cq": {coretest.GPUWorkload("high", 100, 100, int32(1+i%8), 1)}}) {
			for _, v := range d.Victims {
				if ran := now.Sub(v.Workload.AdmittedAt); ran < min {
					t.Fatalf("case %d: victim %s ran %s < minimum %s", i, v.Workload.Key, ran, min)
				}
			}
		}
	}
}

// TestMinRuntimeOfThePriorityClass: a victim's own minimum runtime (from
// its WorkloadPriorityClass) protects it in a queue without one, and the
// larger of the two applies when both are set.
func TestMinRuntimeOfThePriorityClass(t *testing.T) {
	for _, tc := range []struct {
		name              string
		queue, class      time.Duration
		after             time.Duration
		wantProtectedLeft time.Duration
	}{
		{"class only", 0, 10 * time.Minute, 4 * time.Minute, 6 * time.Minute},
		{"class longer than queue", 5 * time.Minute, 10 * time.Minute, 7 * time.Minute, 3 * time.Minute},
		{"queue longer than class", 10 * time.Minute, 5 * time.Minute, 7 * time.Minute, 3 * time.Minute},
		{"both passed", 5 * time.Minute, 6 * time.Minute, 7 * time.Minute, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 4))
			cq.Preemption = core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, MinRuntime: tc.queue}
			c := cacheWith([]*core.ClusterQueue{cq}, "a100")
			c.SetPriorityClassMinRuntime("batch", tc.class)
			c.SetPriorityClassMinRuntime("other", time.Hour)
			low := coretest.Admitted(coretest.GPUWorkload("low", 0, 0, 4, 1), "cq", "a100")
			low.AdmittedAt, low.PriorityClass = coretest.Epoch, "batch"
			c.AddOrUpdateWorkload(low)
			s := c.Snapshot()
			s.SetNow(coretest.Epoch.Add(tc.after))
			d := Schedule(s, map[string][]*core.Workload{"cq": {coretest.GPUWorkload("high", 100, 1, 4, 1)}})[0]
			if tc.wantProtectedLeft == 0 {
				if len(d.Victims) != 1 {
					t.Fatalf("victims %v, pending %s", d.Victims, d.Message())
				}
				return
			}
			if len(d.Victims) != 0 || d.Pending.Kind != core.VictimsInMinRuntime || d.RetryAfter != tc.wantProtectedLeft {
				t.Fatalf("victims %v, pending %v, retry after %s; want protected for %s", d.Victims, d.Pending.Kind, d.RetryAfter, tc.wantProtectedLeft)
			}
		})
	}
}
