package queue

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// nearHeadQueues is a ClusterQueue of two LocalQueues: "lq" holds a0..a9
// (oldest first), "other" holds b0..b2, created after all of lq's.
func nearHeadQueues() *Queues {
	q := NewQueues()
	q.UpsertLocalQueue("ns", "lq", "cq")
	q.UpsertLocalQueue("ns", "other", "cq")
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	for i := range 10 {
		q.AddOrUpdate(coretest.GPUWorkload(fmt.Sprintf("a%d", i), 0, i, 1, 1))
	}
	for i := range 3 {
		wl := coretest.GPUWorkload(fmt.Sprintf("b%d", i), 0, 100+i, 1, 1)
		wl.Queue = "other"
		q.AddOrUpdate(wl)
	}
	return q
}

func isNear(q *Queues, key string, n int) bool {
	near, _ := q.NearHead(key, n)
	return near
}

func nearKeys(q *Queues, n int) []string {
	var out []string
	for _, name := range []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "b0", "b1", "b2", "new", "gone"} {
		if isNear(q, "ns/"+name, n) {
			out = append(out, name)
		}
	}
	return out
}

// TestNearHeadFirstOfClusterQueueAndOfEachLocalQueue: the first n of the
// ClusterQueue and the first n of each LocalQueue, so a LocalQueue whose
// workloads are deep in a shared ClusterQueue still has its head near.
func TestNearHeadFirstOfClusterQueueAndOfEachLocalQueue(t *testing.T) {
	cases := []struct {
		n    int
		want []string
	}{
		{n: 0},
		{n: 1, want: []string{"a0", "b0"}},
		{n: 2, want: []string{"a0", "a1", "b0", "b1"}},
		{n: 20, want: []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "b0", "b1", "b2"}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			if got := nearKeys(nearHeadQueues(), tc.n); !slices.Equal(got, tc.want) {
				t.Errorf("near = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNearHeadCountsParkedWorkloads: a parked workload still holds its
// place, so one tried alone behind a parked backlog is not near.
func TestNearHeadCountsParkedWorkloads(t *testing.T) {
	q := nearHeadQueues()
	for _, wl := range headsOf(q)["cq"] {
		q.Park(wl, seqOf(q))
	}
	late := coretest.GPUWorkload("late", 0, 50, 1, 1)
	q.AddOrUpdate(late)
	if heads := headNames(q, "cq"); !slices.Equal(heads, []string{"late"}) {
		t.Fatalf("heads = %v, want only the new arrival", heads)
	}
	if isNear(q, late.Key, 3) {
		t.Error("a workload behind ten parked ones of its LocalQueue is near the head of n=3")
	}
	if got := nearKeys(q, 3); !slices.Equal(got, []string{"a0", "a1", "a2", "b0", "b1", "b2"}) {
		t.Errorf("near = %v", got)
	}
}

// TestNearHeadFollowsChanges: an arrival ahead pushes the last near one
// out; a deletion lets the next one in; an unknown key is not near, an
// orphan (no queue yet) is.
func TestNearHeadFollowsChanges(t *testing.T) {
	q := nearHeadQueues()
	if !isNear(q, "ns/a2", 3) {
		t.Fatal("a2 is third")
	}
	q.AddOrUpdate(coretest.GPUWorkload("new", 5, 200, 1, 1))
	if isNear(q, "ns/a2", 3) || !isNear(q, "ns/new", 3) {
		t.Errorf("after a higher-priority arrival: near = %v", nearKeys(q, 3))
	}
	q.Delete("ns/a0")
	if !isNear(q, "ns/a2", 3) {
		t.Errorf("after a0 left: near = %v", nearKeys(q, 3))
	}
	if near, queued := q.NearHead("ns/gone", 3); near || queued {
		t.Errorf("an unknown workload: near %v, queued %v", near, queued)
	}
	orphan := coretest.GPUWorkload("orphan", 0, 0, 1, 1)
	orphan.Queue = "nowhere"
	q.AddOrUpdate(orphan)
	if !isNear(q, orphan.Key, 3) {
		t.Error("a workload waiting for its queue is not near")
	}
}

// TestNearHeadKeptAcrossChanges (property): after any sequence of
// arrivals, updates (priority, LocalQueue), deletions, parking and
// unparking, the kept answer is the one computed afresh from the order.
func TestNearHeadKeptAcrossChanges(t *testing.T) {
	const n = 3
	rng := rand.New(rand.NewPCG(7, 11))
	for c := range 200 {
		q := NewQueues()
		q.UpsertClusterQueue("cq", core.BestEffortFIFO)
		for _, lq := range []string{"a", "b", "c"} {
			q.UpsertLocalQueue("ns", lq, "cq")
		}
		var history []string
		for step := range 40 {
			name := fmt.Sprintf("w%d", rng.IntN(15))
			switch op := rng.IntN(6); {
			case op < 3:
				wl := coretest.GPUWorkload(name, int32(rng.IntN(3)), rng.IntN(20), 1, 1)
				wl.Queue = []string{"a", "b", "c"}[rng.IntN(3)]
				q.AddOrUpdate(wl)
				history = append(history, fmt.Sprintf("put %s p%d t%d %s", name, wl.Priority, wl.Created.Unix()%100, wl.Queue))
			case op == 3:
				q.Delete("ns/" + name)
				history = append(history, "delete "+name)
			case op == 4:
				for _, wl := range headsOf(q)["cq"] {
					if rng.IntN(2) == 0 {
						q.Park(wl, seqOf(q))
					}
				}
				history = append(history, "park some")
			default:
				q.Unpark("cq")
				history = append(history, "unpark")
			}
			want := freshNear(q, n)
			for i := range 15 {
				key := fmt.Sprintf("ns/w%d", i)
				if got := isNear(q, key, n); got != want[key] {
					t.Fatalf("case %d step %d: NearHead(%s) = %v, want %v after %v", c, step, key, got, want[key], history)
				}
			}
		}
	}
}

// freshNear is NearHead's answer from the queue's whole order.
func freshNear(q *Queues, n int) map[string]bool {
	o, _ := q.Pending("cq")
	near := map[string]bool{}
	perLQ := map[string]int{}
	for i, wl := range o.Ordered() {
		if i < n || perLQ[wl.Queue] < n {
			near[wl.Key] = true
		}
		perLQ[wl.Queue]++
	}
	return near
}

func BenchmarkNearHead(b *testing.B) {
	backlog := func(pending int) *Queues {
		q := NewQueues()
		q.UpsertClusterQueue("cq", core.BestEffortFIFO)
		for i := range 100 {
			q.UpsertLocalQueue("ns", fmt.Sprintf("lq%d", i), "cq")
		}
		for i := range pending {
			wl := coretest.GPUWorkload(fmt.Sprintf("w%d", i), int32(i%3), i, 1, 1)
			wl.Queue = fmt.Sprintf("lq%d", i%100)
			q.AddOrUpdate(wl)
		}
		return q
	}
	for _, pending := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(pending), func(b *testing.B) {
			b.Run("unchanged", func(b *testing.B) {
				q := backlog(pending)
				for b.Loop() {
					q.NearHead("ns/w5", 10)
				}
			})
			b.Run("after an arrival at the back", func(b *testing.B) {
				q := backlog(pending)
				for i := 0; b.Loop(); i++ {
					wl := coretest.GPUWorkload(fmt.Sprintf("late%d", i), 0, pending+i, 1, 1)
					wl.Queue = fmt.Sprintf("lq%d", i%100)
					q.AddOrUpdate(wl)
					q.NearHead("ns/w5", 10)
					q.Delete(wl.Key)
				}
			})
			b.Run("after a change near the head", func(b *testing.B) {
				q := backlog(pending)
				for i := 0; b.Loop(); i++ {
					wl := coretest.GPUWorkload("w5", int32(i%3), 5, 1, 1)
					wl.Queue = "lq5"
					q.AddOrUpdate(wl)
					q.NearHead("ns/w5", 10)
				}
			})
		})
	}
}
