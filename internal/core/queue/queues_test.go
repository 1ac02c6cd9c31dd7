package queue

import (
	"context"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

func headNames(q *Queues, cq string) []string {
	var out []string
	for _, w := range headsOf(q)[cq] {
		out = append(out, w.Name)
	}
	return out
}

func TestQueuesOrphansWaitForTheirQueue(t *testing.T) {
	q := NewQueues()
	q.AddOrUpdate(coretest.GPUWorkload("w", 0, 0, 1, 1))
	if len(headsOf(q)) != 0 {
		t.Fatal("a workload without LocalQueue is not schedulable")
	}
	q.UpsertLocalQueue("ns", "lq", "cq")
	if len(headsOf(q)) != 0 {
		t.Fatal("a workload without ClusterQueue is not schedulable")
	}
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	if got := headNames(q, "cq"); len(got) != 1 {
		t.Fatalf("heads = %v", got)
	}
	q.DeleteLocalQueue("ns", "lq")
	if len(headsOf(q)) != 0 {
		t.Fatal("deleting the LocalQueue sets its workloads aside")
	}
	if n := q.PendingInLocalQueue("ns", "lq"); n != 1 {
		t.Errorf("orphans still count as pending in their LocalQueue: %d", n)
	}
}

// TestQueuesPendingCounts: the counts follow adds, updates, parking,
// moves between LocalQueues and deletes without walking the queues.
func TestQueuesPendingCounts(t *testing.T) {
	q := NewQueues()
	q.UpsertLocalQueue("ns", "lq", "cq")
	q.UpsertLocalQueue("ns", "other", "cq")
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	a, b := coretest.GPUWorkload("a", 0, 0, 1, 1), coretest.GPUWorkload("b", 0, 1, 1, 1)
	q.AddOrUpdate(a)
	q.AddOrUpdate(b)
	q.AddOrUpdate(coretest.GPUWorkload("a", 0, 0, 1, 1)) // an update of the same workload
	q.Park(b, seqOf(q))
	check := func(step string, cq, lq, other int) {
		t.Helper()
		if got := [3]int{q.PendingInClusterQueue("cq"), q.PendingInLocalQueue("ns", "lq"), q.PendingInLocalQueue("ns", "other")}; got != [3]int{cq, lq, other} {
			t.Errorf("%s: cq, lq, other = %v, want %v", step, got, [3]int{cq, lq, other})
		}
	}
	check("queued and parked", 2, 2, 0)
	moved := coretest.GPUWorkload("a", 0, 0, 1, 1)
	moved.Queue = "other"
	q.AddOrUpdate(moved)
	check("moved to another LocalQueue", 2, 1, 1)
	q.Delete(a.Key)
	q.Delete(b.Key)
	q.Delete(b.Key)
	check("deleted", 0, 0, 0)
}

func TestQueuesParkAndUnpark(t *testing.T) {
	q := NewQueues()
	q.UpsertLocalQueue("ns", "lq", "cq")
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	w := coretest.GPUWorkload("w", 0, 0, 1, 1)
	q.AddOrUpdate(w)
	q.Park(w, seqOf(q))
	if len(headsOf(q)) != 0 {
		t.Fatal("parked workload still tried")
	}
	// A status write: same request, stays parked.
	same := *w
	q.AddOrUpdate(&same)
	if len(headsOf(q)) != 0 {
		t.Fatal("an update that changes nothing unparked the workload")
	}
	// A real change: priority raised, tried again.
	raised := *w
	raised.Priority = 5
	q.AddOrUpdate(&raised)
	if got := headNames(q, "cq"); len(got) != 1 {
		t.Fatal("a changed workload is tried again")
	}
	q.Park(w, seqOf(q))
	q.Unpark("cq")
	if got := headNames(q, "cq"); len(got) != 1 {
		t.Fatal("unpark did not bring the workload back")
	}
}

func TestQueuesOrder(t *testing.T) {
	q := NewQueues()
	q.UpsertLocalQueue("ns", "lq", "cq")
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	for _, w := range []*core.Workload{coretest.GPUWorkload("c", 0, 3, 1, 1), coretest.GPUWorkload("a", 5, 9, 1, 1), coretest.GPUWorkload("b", 0, 1, 1, 1)} {
		q.AddOrUpdate(w)
	}
	got := headNames(q, "cq")
	want := []string{"a", "b", "c"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestQueuesWaitWakesOnAdd(t *testing.T) {
	q := NewQueues()
	q.UpsertLocalQueue("ns", "lq", "cq")
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for q.Wait(ctx) { // drain the wake-up of UpsertClusterQueue
		break
	}
	go q.AddOrUpdate(coretest.GPUWorkload("w", 0, 0, 1, 1))
	if !q.Wait(ctx) {
		t.Fatal("no wake-up after a new workload")
	}
}

func headsOf(q *Queues) map[string][]*core.Workload { h, _ := q.Heads(); return h }
func seqOf(q *Queues) uint64                        { _, s := q.Heads(); return s }

// TestQueuesNoParkAfterARelease: a cycle that decided on an old snapshot
// must not park a workload when quota was released meanwhile.
func TestQueuesNoParkAfterARelease(t *testing.T) {
	q := NewQueues()
	q.UpsertLocalQueue("ns", "lq", "cq")
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	w := coretest.GPUWorkload("w", 0, 0, 1, 1)
	q.AddOrUpdate(w)
	_, seq := q.Heads()
	q.Unpark("cq") // quota freed while the cycle ran
	q.Park(w, seq)
	if len(headsOf(q)["cq"]) != 1 {
		t.Fatal("parked on a stale decision: nothing would wake it")
	}
}

// TestQueuesNoParkOfAChangedWorkload: a workload that changes what it asks
// for while a cycle decides on its old version is not parked under that
// decision: shrunk, reprioritised or moved, it may fit now.
func TestQueuesNoParkOfAChangedWorkload(t *testing.T) {
	changes := map[string]func(w *core.Workload){
		"shrunk":      func(w *core.Workload) { w.PodSets[0].Count = 1 },
		"prioritised": func(w *core.Workload) { w.Priority = 100 },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			q := NewQueues()
			q.UpsertLocalQueue("ns", "lq", "cq")
			q.UpsertClusterQueue("cq", core.BestEffortFIFO)
			decided := coretest.GPUWorkload("w", 0, 0, 8, 1)
			q.AddOrUpdate(decided)
			_, seq := q.Heads()
			updated := coretest.GPUWorkload("w", 0, 0, 8, 1)
			change(updated)
			q.AddOrUpdate(updated) // arrives while the cycle runs
			q.Park(decided, seq)
			if len(headsOf(q)["cq"]) != 1 {
				t.Fatal("the changed workload was parked under its old decision")
			}
		})
	}
	q := NewQueues()
	q.UpsertLocalQueue("ns", "lq", "cq")
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	w := coretest.GPUWorkload("w", 0, 0, 8, 1)
	q.AddOrUpdate(w)
	_, seq := q.Heads()
	same := *w
	q.AddOrUpdate(&same) // a status write changes nothing it asks for
	q.Park(w, seq)
	if len(headsOf(q)["cq"]) != 0 {
		t.Error("an unchanged workload was not parked")
	}
}

// TestQueuesLocalQueueRecreatedElsewhere: a LocalQueue deleted and
// recreated pointing at another ClusterQueue takes its pending workloads
// there, whether or not its deletion was seen in between.
func TestQueuesLocalQueueRecreatedElsewhere(t *testing.T) {
	for name, seenDeleted := range map[string]bool{"deletion seen": true, "deletion missed": false} {
		t.Run(name, func(t *testing.T) {
			q := NewQueues()
			q.UpsertClusterQueue("old", core.BestEffortFIFO)
			q.UpsertClusterQueue("new", core.BestEffortFIFO)
			q.UpsertLocalQueue("ns", "lq", "old")
			w := coretest.GPUWorkload("w", 0, 0, 1, 1)
			q.AddOrUpdate(w)
			q.Park(w, seqOf(q))
			if seenDeleted {
				q.DeleteLocalQueue("ns", "lq")
			}
			q.UpsertLocalQueue("ns", "lq", "new")
			heads := headsOf(q)
			if len(heads["new"]) != 1 || len(heads["old"]) != 0 {
				t.Errorf("heads = %v, want w in new only", heads)
			}
			if q.PendingInClusterQueue("old") != 0 {
				t.Error("still counted pending in the old ClusterQueue")
			}
		})
	}
}
