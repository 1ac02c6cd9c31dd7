package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// yieldingQueue is starvationQueue whose held room yields to a workload
// that has waited yield.
func yieldingQueue(yield time.Duration) *testCache {
	c := starvationQueue(0)
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 16))
	cq.StarvationAfter, cq.StarvationYieldAfter = 30*time.Minute, yield
	c.UpsertClusterQueue(cq)
	return c
}

// TestHeldRoomYieldsToALongWait: a 1-GPU workload behind room held for a
// starving 16-GPU one waits, told when the room yields to it, and is asked
// to be tried again then (parked, nothing else would wake it); once it has
// waited the yield it takes the free GPU while the room stays held for the
// 16-GPU one; with yield 0 it never does.
func TestHeldRoomYieldsToALongWait(t *testing.T) {
	big := coretest.GPUWorkload("big", 0, 0, 16, 1)
	small := coretest.GPUWorkload("small", 0, 60, 1, 1) // created a minute after big
	c := yieldingQueue(4 * time.Hour)

	ds := cycleAt(c, coretest.Epoch.Add(time.Hour), big, small)
	d := ds["small"]
	if d.Admission != nil || d.Pending.Kind != core.BehindReservation || !d.Park {
		t.Fatalf("before the yield: admitted %v, pending %v, parked %v", d.Admission != nil, d.Pending.Kind, d.Park)
	}
	if want := 3*time.Hour + time.Minute; d.RetryAfter != want {
		t.Errorf("retry after %s, want %s (when it has waited 4h)", d.RetryAfter, want)
	}
	if msg := d.Message(); !strings.Contains(msg, "or one that has waited 4h0m0s (starvation.yieldAfterSeconds)") {
		t.Errorf("message %q", msg)
	}

	ds = cycleAt(c, coretest.Epoch.Add(4*time.Hour+time.Minute), big, small)
	if ds["small"].Admission == nil {
		t.Fatalf("after the yield: %s", ds["small"].Message())
	}
	if ds["big"].Pending.Kind != core.Reserved {
		t.Errorf("big: %v, want its room still held", ds["big"].Pending.Kind)
	}

	ds = cycleAt(yieldingQueue(0), coretest.Epoch.Add(10*time.Hour), big, small)
	if ds["small"].Admission != nil || ds["small"].RetryAfter != 0 {
		t.Errorf("yield 0: small admitted %v, retry after %s; the room never yields", ds["small"].Admission != nil, ds["small"].RetryAfter)
	}
}

// TestDefaultYieldIsTenThresholds: the default the simulation chose.
func TestDefaultYieldIsTenThresholds(t *testing.T) {
	if got := DefaultStarvationYield(30 * time.Minute); got != 5*time.Hour {
		t.Errorf("default yield for 30m: %s", got)
	}
	if got := DefaultStarvationYield(0); got != 0 {
		t.Errorf("no guard, yet a yield of %s", got)
	}
}
