package queue

import (
	"fmt"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

func inQueue(w *core.Workload, lq string) *core.Workload {
	w.Queue = lq
	return w
}

func positionsOf(ps []Position) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s@%d/%d", p.Workload.Name, p.InClusterQueue, p.InLocalQueue))
	}
	return out
}

func twoLocalQueues() *Queues {
	q := NewQueues()
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	q.UpsertLocalQueue("ns", "a", "cq")
	q.UpsertLocalQueue("ns", "b", "cq")
	return q
}

// TestPendingPositions: positions follow the queue order (priority, then
// age), parked workloads included, and count each LocalQueue on its own.
func TestPendingPositions(t *testing.T) {
	q := twoLocalQueues()
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("old", 0, 1, 1, 1), "a"))
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("new", 0, 9, 1, 1), "b"))
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("urgent", 10, 5, 1, 1), "b"))
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("mid", 0, 4, 1, 1), "a"))
	_, seq := q.Heads()
	q.Park(q.queues["cq"].get("ns/mid"), seq)

	order, ok := q.Pending("cq")
	if !ok {
		t.Fatal("cq is known")
	}
	for _, tc := range []struct {
		name          string
		offset, limit int
		keep          func(*core.Workload) bool
		want          string
	}{
		{name: "all", offset: 0, limit: 10, want: "[urgent@0/0 old@1/0 mid@2/1 new@3/1]"},
		{name: "a page", offset: 1, limit: 2, want: "[old@1/0 mid@2/1]"},
		{name: "past the end", offset: 4, limit: 2, want: "[]"},
		{name: "limit 0", offset: 0, limit: 0, want: "[]"},
		{name: "one local queue", offset: 0, limit: 10, keep: func(w *core.Workload) bool { return w.Queue == "b" }, want: "[urgent@0/0 new@3/1]"},
		{name: "its second page", offset: 1, limit: 10, keep: func(w *core.Workload) bool { return w.Queue == "b" }, want: "[new@3/1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(positionsOf(order.Page(tc.offset, tc.limit, tc.keep))); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	if _, ok := q.Pending("nope"); ok {
		t.Error("an unknown ClusterQueue is not found")
	}
}

// TestPendingOrderFollowsChanges: the sorted order is reused while nothing
// changes, and sorted again after an add, an update or a removal.
func TestPendingOrderFollowsChanges(t *testing.T) {
	q := twoLocalQueues()
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("x", 0, 1, 1, 1), "a"))
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("y", 0, 2, 1, 1), "a"))
	first, _ := q.Pending("cq")
	again, _ := q.Pending("cq")
	if &first.Workloads[0] != &again.Workloads[0] {
		t.Error("an unchanged queue's order is sorted once")
	}
	steps := []struct {
		name   string
		change func()
		want   string
	}{
		{"a higher priority arrives", func() { q.AddOrUpdate(inQueue(coretest.GPUWorkload("z", 5, 3, 1, 1), "b")) }, "[z@0/0 x@1/0 y@2/1]"},
		{"y is reprioritised", func() { q.AddOrUpdate(inQueue(coretest.GPUWorkload("y", 9, 2, 1, 1), "a")) }, "[y@0/0 z@1/0 x@2/1]"},
		{"z is admitted", func() { q.Delete("ns/z") }, "[y@0/0 x@1/1]"},
	}
	for _, s := range steps {
		s.change()
		order, _ := q.Pending("cq")
		if got := fmt.Sprint(positionsOf(order.Page(0, 10, nil))); got != s.want {
			t.Errorf("%s: got %s, want %s", s.name, got, s.want)
		}
	}
}

// TestWaitingForClusterQueue: workloads of a LocalQueue without a
// ClusterQueue are listed in queue order.
func TestWaitingForClusterQueue(t *testing.T) {
	q := NewQueues()
	q.UpsertLocalQueue("ns", "lq", "missing")
	q.AddOrUpdate(coretest.GPUWorkload("late", 0, 9, 1, 1))
	q.AddOrUpdate(coretest.GPUWorkload("early", 0, 1, 1, 1))
	got := q.WaitingForClusterQueue("ns", "lq")
	if len(got) != 2 || got[0].Name != "early" || got[1].Name != "late" {
		t.Errorf("got %v", got)
	}
	if got := q.WaitingForClusterQueue("ns", "other"); len(got) != 0 {
		t.Errorf("another LocalQueue's: %v", got)
	}
}

// BenchmarkPendingPage reads the first page of positions in a ClusterQueue
// of 100,000 pending workloads over 100 LocalQueues: first with the order
// cached (the common case: many reads between changes), then with a change
// before every read (a sort each time).
func BenchmarkPendingPage(b *testing.B) {
	q := NewQueues()
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	for i := range 100 {
		q.UpsertLocalQueue("ns", fmt.Sprintf("lq%d", i), "cq")
	}
	for i := range 100000 {
		q.AddOrUpdate(inQueue(coretest.GPUWorkload(fmt.Sprintf("w%d", i), int32(i%7), i, 1, 1), fmt.Sprintf("lq%d", i%100)))
	}
	lq42 := func(w *core.Workload) bool { return w.Queue == "lq42" }
	b.Run("cached/clusterqueue", func(b *testing.B) {
		for b.Loop() {
			order, _ := q.Pending("cq")
			_ = order.Page(0, 1000, nil)
		}
	})
	b.Run("cached/localqueue", func(b *testing.B) {
		for b.Loop() {
			order, _ := q.Pending("cq")
			_ = order.Page(0, 1000, lq42)
		}
	})
	b.Run("changed/clusterqueue", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			q.AddOrUpdate(inQueue(coretest.GPUWorkload(fmt.Sprintf("w%d", i%100000), int32(i%5), i%100000, 1, 2), fmt.Sprintf("lq%d", i%100)))
			order, _ := q.Pending("cq")
			_ = order.Page(0, 1000, nil)
		}
	})
}

// TestPendingByStatus: parked workloads count as inadmissible, in their
// ClusterQueue and in their LocalQueue, through park, unpark, update and
// removal.
func TestPendingByStatus(t *testing.T) {
	q := twoLocalQueues()
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("a1", 0, 1, 1, 1), "a"))
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("a2", 0, 2, 1, 1), "a"))
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("b1", 0, 3, 1, 1), "b"))
	check := func(step string, cqActive, cqParked, aActive, aParked int) {
		t.Helper()
		if a, p := q.PendingByStatus("cq"); a != cqActive || p != cqParked {
			t.Errorf("%s: cq %d/%d, want %d/%d", step, a, p, cqActive, cqParked)
		}
		if a, p := q.LocalQueuePendingByStatus("ns", "a"); a != aActive || p != aParked {
			t.Errorf("%s: lq a %d/%d, want %d/%d", step, a, p, aActive, aParked)
		}
	}
	check("queued", 3, 0, 2, 0)
	_, seq := q.Heads()
	q.Park(q.queues["cq"].get("ns/a1"), seq)
	q.Park(q.queues["cq"].get("ns/b1"), seq)
	check("two parked", 1, 2, 1, 1)
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("a1", 0, 1, 1, 1), "a")) // a status write: stays parked
	check("parked one updated", 1, 2, 1, 1)
	q.Delete("ns/a1")
	check("parked one admitted", 1, 1, 1, 0)
	q.Unpark("cq")
	q.Heads()
	check("unparked", 2, 0, 1, 0)
	q.UpsertLocalQueue("ns", "c", "missing")
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("c1", 0, 1, 1, 1), "c"))
	if a, p := q.LocalQueuePendingByStatus("ns", "c"); a != 0 || p != 1 {
		t.Errorf("a workload without ClusterQueue is inadmissible: %d/%d", a, p)
	}
}

func TestOldestPending(t *testing.T) {
	q := twoLocalQueues()
	if !q.OldestPending("cq").IsZero() {
		t.Error("an empty queue has no oldest")
	}
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("young", 9, 50, 1, 1), "a"))
	q.AddOrUpdate(inQueue(coretest.GPUWorkload("old", 0, 10, 1, 1), "b"))
	_, seq := q.Heads()
	q.Park(q.queues["cq"].get("ns/old"), seq)
	if got := q.OldestPending("cq"); !got.Equal(coretest.Epoch.Add(10 * time.Second)) {
		t.Errorf("oldest = %v, a parked one counts", got)
	}
}
