package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/queue"
	"github.com/musterhq/muster/internal/core/quota"
)

// afsQueue is an 8-GPU queue with admission fair sharing (on unless off)
// fed by LocalQueues "a" and "b" of namespace ns.
func afsQueue(on bool) *testCache {
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 8))
	cq.AdmissionFairSharing = on
	return cacheWith([]*core.ClusterQueue{cq}, "a100")
}

// lqWl is a workload of LocalQueue lq asking n GPUs, created age seconds
// after epoch.
func lqWl(name, lq string, age int, n int64) *core.Workload {
	w := coretest.GPUWorkload(name, 0, age, 1, n)
	w.Queue = lq
	return w
}

func admittedNames(c *testCache, pending ...*core.Workload) []string {
	s := c.Snapshot()
	s.SetNow(coretest.Epoch.Add(time.Hour))
	return names(Schedule(s, map[string][]*core.Workload{"cq": pending}), true)
}

// TestAdmissionFairSharingServesTheLeastUsedLocalQueue: with "a" holding
// 6 GPUs and 2 free, b's younger workload goes before a's older one; without
// admission fair sharing the older one goes (Kueue's ordering either way).
func TestAdmissionFairSharingServesTheLeastUsedLocalQueue(t *testing.T) {
	for _, tc := range []struct {
		on   bool
		want []string
	}{{true, []string{"b1"}}, {false, []string{"a1"}}} {
		c := afsQueue(tc.on)
		c.AddOrUpdateWorkload(coretest.Admitted(lqWl("a0", "a", 0, 6), "cq", "a100"))
		if got := admittedNames(c, lqWl("a1", "a", 1, 2), lqWl("b1", "b", 2, 2)); !slices.Equal(got, tc.want) {
			t.Errorf("fair sharing %v: admitted %v, want %v", tc.on, got, tc.want)
		}
	}
}

// TestAdmissionFairSharingTakesTurnsWithinACycle: two idle LocalQueues
// with four 2-GPU workloads each share the 8 GPUs of one cycle half and
// half, a's being older: each admission raises its LocalQueue's usage.
// Without it, a's four take everything.
func TestAdmissionFairSharingTakesTurnsWithinACycle(t *testing.T) {
	var pending []*core.Workload
	for i := range 4 {
		pending = append(pending, lqWl("a"+string(rune('1'+i)), "a", i, 2), lqWl("b"+string(rune('1'+i)), "b", 10+i, 2))
	}
	if got := admittedNames(afsQueue(true), pending...); !slices.Equal(got, []string{"a1", "b1", "a2", "b2"}) {
		t.Errorf("with admission fair sharing: %v", got)
	}
	if got := admittedNames(afsQueue(false), pending...); !slices.Equal(got, []string{"a1", "a2", "a3", "a4"}) {
		t.Errorf("without: %v", got)
	}
}

// TestAdmissionFairSharingWeights: b of weight 3 gets three GPUs to a's
// one.
func TestAdmissionFairSharingWeights(t *testing.T) {
	c := afsQueue(true)
	c.SetLocalQueueWeight("ns/b", 3000)
	var pending []*core.Workload
	for i := range 8 {
		pending = append(pending, lqWl("a"+string(rune('1'+i)), "a", i, 1), lqWl("b"+string(rune('1'+i)), "b", 10+i, 1))
	}
	got := admittedNames(c, pending...)
	a := 0
	for _, n := range got {
		if n[0] == 'a' {
			a++
		}
	}
	if len(got) != 8 || a != 2 {
		t.Errorf("admitted %v: %d of a's, want 2 of 8", got, a)
	}
}

// TestAdmissionFairSharingRemembersWithDecay: "a" ran 8 GPUs for hours and
// just finished. With current usage both LocalQueues are at 0 and a's
// older workload goes first; with decayed usage b's does, and the status
// reading shows a's share.
func TestAdmissionFairSharingRemembersWithDecay(t *testing.T) {
	for _, decay := range []bool{false, true} {
		c := afsQueue(true)
		if decay {
			c.SetUsageDecay(quota.DecayConfig{HalfLife: time.Hour}, 5*time.Minute)
		}
		past := coretest.Admitted(lqWl("past", "a", 0, 8), "cq", "a100")
		c.AddOrUpdateWorkload(past)
		for m := 0; m <= 180; m += 5 {
			c.SampleUsage(coretest.Epoch.Add(time.Duration(m) * time.Minute))
		}
		c.DeleteWorkload(past.Key)
		want := []string{"a1"}
		if decay {
			want = []string{"b1"}
			if share := c.LocalQueueShare("ns/a"); share < 7000 {
				t.Errorf("a's decayed share %d, want about 8000", share)
			}
		}
		if got := admittedNames(c, lqWl("a1", "a", 1, 8), lqWl("b1", "b", 2, 8)); !slices.Equal(got, want) {
			t.Errorf("decay %v: admitted %v, want %v", decay, got, want)
		}
	}
}

// TestAdmissionFairSharingKeepsPriorityWithinALocalQueue: a LocalQueue's
// own workloads still go by priority.
func TestAdmissionFairSharingKeepsPriorityWithinALocalQueue(t *testing.T) {
	low, high := lqWl("low", "a", 0, 8), lqWl("high", "a", 5, 8)
	high.Priority = 10
	if got := admittedNames(afsQueue(true), low, high); !slices.Equal(got, []string{"high"}) {
		t.Errorf("admitted %v, want high", got)
	}
}

// TestAdmissionFairSharingDecidesEachOnce (property): whatever the
// LocalQueues, weights and sizes, a cycle decides every pending workload
// exactly once and admits no more than the quota.
func TestAdmissionFairSharingDecidesEachOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		c := afsQueue(true)
		c.SetLocalQueueWeight("ns/l1", int64(r.IntN(4))*1000)
		var pending []*core.Workload
		for i := range 1 + r.IntN(20) {
			pending = append(pending, lqWl(fmt.Sprintf("w%d", i), fmt.Sprintf("l%d", r.IntN(4)), r.IntN(50), 1+int64(r.IntN(4))))
		}
		s := c.Snapshot()
		s.SetNow(coretest.Epoch.Add(time.Hour))
		seen, used := map[string]int{}, int64(0)
		for _, d := range Schedule(s, map[string][]*core.Workload{"cq": pending}) {
			seen[d.Workload.Name]++
			if d.Admission != nil {
				used += d.Admission.Usage()[gpuA100]
			}
		}
		if len(seen) != len(pending) || used > 8 {
			t.Fatalf("decided %d distinct of %d, used %d of 8", len(seen), len(pending), used)
		}
		for n, k := range seen {
			if k != 1 {
				t.Fatalf("%s decided %d times", n, k)
			}
		}
	}
}

// TestInAdmissionOrder: the visibility order of a queue with admission
// fair sharing follows the LocalQueues' turns (a holds 4 GPUs, so b's
// first two go before a's first), and a queue without it keeps priority
// order.
func TestInAdmissionOrder(t *testing.T) {
	pending := []*core.Workload{lqWl("a1", "a", 0, 2), lqWl("a2", "a", 1, 2), lqWl("b1", "b", 2, 2), lqWl("b2", "b", 3, 2), lqWl("b3", "b", 4, 2)}
	for _, tc := range []struct {
		on   bool
		want []string
	}{
		{true, []string{"b1", "b2", "a1", "b3", "a2"}},
		{false, []string{"a1", "a2", "b1", "b2", "b3"}},
	} {
		c := afsQueue(tc.on)
		c.AddOrUpdateWorkload(coretest.Admitted(lqWl("held", "a", 0, 4), "cq", "a100"))
		o := InAdmissionOrder(c.Cache, "cq", queue.NewPendingOrder(pending))
		var got []string
		for _, p := range o.Page(0, 10, nil) {
			got = append(got, p.Workload.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("fair sharing %v: %v, want %v", tc.on, got, tc.want)
		}
	}
}

// TestAdmissionFairSharingWeightZeroComesLast: a LocalQueue of weight 0
// comes after a used one even when it has used nothing (its status and
// the visibility API say "last" too).
func TestAdmissionFairSharingWeightZeroComesLast(t *testing.T) {
	c := afsQueue(true)
	c.SetLocalQueueWeight("ns/z", 0)
	c.AddOrUpdateWorkload(coretest.Admitted(lqWl("a0", "a", 0, 6), "cq", "a100"))
	if got := admittedNames(c, lqWl("z1", "z", 1, 2), lqWl("a1", "a", 2, 2)); !slices.Equal(got, []string{"a1"}) {
		t.Errorf("admitted %v, want [a1]: weight 0 goes last", got)
	}
}

// TestShownOrderIsTheCyclesOrder (property): in a queue with admission
// fair sharing and room for everything, one cycle admits in exactly the
// order the visibility API and the dashboard show (InAdmissionOrder):
// both take the LocalQueues' turns through one lqTurns.
func TestShownOrderIsTheCyclesOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 200 {
		cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 1000))
		cq.AdmissionFairSharing = true
		c := cacheWith([]*core.ClusterQueue{cq}, "a100")
		for j := range r.IntN(4) {
			c.AddOrUpdateWorkload(coretest.Admitted(lqWl(fmt.Sprintf("held%d", j), string(rune('a'+r.IntN(3))), 0, int64(1+r.IntN(8))), "cq", "a100"))
		}
		var pending []*core.Workload
		for j := range 2 + r.IntN(10) {
			pending = append(pending, lqWl(fmt.Sprintf("w%d", j), string(rune('a'+r.IntN(3))), r.IntN(100), int64(1+r.IntN(4))))
		}
		var shown []string
		for _, p := range InAdmissionOrder(c.Cache, "cq", queue.NewPendingOrder(pending)).Page(0, 100, nil) {
			shown = append(shown, p.Workload.Name)
		}
		if got := admittedNames(c, pending...); !slices.Equal(got, shown) {
			t.Fatalf("case %d: the cycle admits %v, the order shown is %v", i, got, shown)
		}
	}
}

// TestAdmissionOrdersKeepTheLastOrder: a read reuses the last order in
// turns while the queue and the LocalQueues' scores are unchanged, takes
// the turns again after either changes (always equal to InAdmissionOrder),
// and lets go of a deleted queue's.
func TestAdmissionOrdersKeepTheLastOrder(t *testing.T) {
	c := afsQueue(true)
	q := queue.NewQueues()
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	for _, lq := range []string{"a", "b"} {
		q.UpsertLocalQueue("ns", lq, "cq")
	}
	for _, w := range []*core.Workload{lqWl("a1", "a", 0, 2), lqWl("a2", "a", 1, 2), lqWl("b1", "b", 2, 2)} {
		q.AddOrUpdate(w)
	}
	orders := &AdmissionOrders{Cache: c.Cache}
	read := func() queue.PendingOrder {
		t.Helper()
		o, _ := q.Pending("cq")
		got := orders.Order("cq", o)
		if want := InAdmissionOrder(c.Cache, "cq", o); !slices.Equal(got.Ordered(), want.Ordered()) {
			t.Fatalf("kept order %v, taking turns now gives %v", got.Ordered(), want.Ordered())
		}
		return got
	}
	first := read()
	if again := read(); !again.Same(first) {
		t.Error("an unchanged queue's turns are taken once")
	}
	c.AddOrUpdateWorkload(coretest.Admitted(lqWl("held", "a", 0, 4), "cq", "a100"))
	byScore := read()
	if byScore.Same(first) || byScore.Ordered()[0].Name != "b1" {
		t.Errorf("after a's usage grew: %v, want b1 first", byScore.Ordered())
	}
	q.AddOrUpdate(lqWl("b0", "b", 0, 1))
	if byQueue := read(); byQueue.Same(byScore) || len(byQueue.Ordered()) != 4 {
		t.Errorf("after b0 arrived: %v", byQueue.Ordered())
	}
	c.DeleteClusterQueue("cq")
	o, _ := q.Pending("cq")
	orders.Order("cq", o)
	if len(orders.last) != 0 {
		t.Error("a deleted queue's order is let go")
	}
}
