package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// heldRoomWorld is Kueue's large-scale mix in small: queues of nominal 20
// cpu, borrowing limit 100, reclaimWithinCohort Any, LowerPriority within
// the queue, a 2 s preemption delay. Queues p and w0..w(waiters-1) have
// nothing admitted; the cohort's whole quota is used by mediums (5 cpu,
// priority 100) of two borrowers. Each w queue's large (20 cpu, priority
// 200) is within its delay, holding room; p's large, younger, is past it.
func heldRoomWorld(waiters int) (*testCache, map[string][]*core.Workload, *core.Workload) {
	mk := func(name string) *core.ClusterQueue {
		cq := inCohort(coretest.GPUQueue(name, limited(coretest.Quotas("f", map[string]int64{"cpu": 20}), "cpu", 100, -1)), "c")
		cq.ResourceGroups[0].Resources = []string{"cpu"}
		cq.Strategy = core.BestEffortFIFO
		cq.Preemption = core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, ReclaimWithinCohort: core.PreemptAny}
		return cq
	}
	cqs := []*core.ClusterQueue{mk("p"), mk("b0"), mk("b1")}
	for i := range waiters {
		cqs = append(cqs, mk(fmt.Sprintf("w%d", i)))
	}
	c := cacheWith(cqs, "f")
	c.cfg.PreemptionDelay = 2 * time.Second
	for i := range 20 * len(cqs) / 5 {
		b := fmt.Sprintf("b%d", i%2)
		w := coretest.Workload(fmt.Sprintf("medium-%s-%d", b, i), 100, i, 1, map[string]int64{"cpu": 5})
		w.Key = "ns/" + w.Name
		c.AddOrUpdateWorkload(at(coretest.Admitted(w, b, "f"), i))
	}
	now := coretest.Epoch.Add(time.Hour)
	heads := map[string][]*core.Workload{}
	for i := range waiters {
		w := coretest.Workload(fmt.Sprintf("large-w%d", i), 200, 1000+i, 1, map[string]int64{"cpu": 20})
		w.NeedsPreemptionSince = now
		heads[fmt.Sprintf("w%d", i)] = []*core.Workload{w}
	}
	p := coretest.Workload("large-p", 200, 2000, 1, map[string]int64{"cpu": 20})
	p.NeedsPreemptionSince = now.Add(-3 * time.Second)
	heads["p"] = []*core.Workload{p}
	return c, heads, p
}

// victimsCPU is the millicpu the victims hold in flavor f.
func victimsCPU(victims []Victim) int64 {
	var cpu int64
	for _, v := range victims {
		cpu += v.Workload.Admission.Usage()[core.FlavorResource{Flavor: "f", Resource: "cpu"}]
	}
	return cpu
}

// TestHeldRoomDoesNotInflateAnotherPreemptorsVictims: a preemptor waiting
// its delay sets aside only the room its queue could take now. Its queue's
// nominal quota is lent out here, so it sets aside nothing, and the
// preemptor past its delay evicts for its own 20 cpu (4 mediums) however
// many wait beside it — not 20 cpu more for each of them.
func TestHeldRoomDoesNotInflateAnotherPreemptorsVictims(t *testing.T) {
	for _, waiters := range []int{0, 1, 3, 8} {
		t.Run(fmt.Sprintf("%d waiting", waiters), func(t *testing.T) {
			c, heads, p := heldRoomWorld(waiters)
			s := c.Snapshot()
			s.SetNow(coretest.Epoch.Add(time.Hour))
			var victims []Victim
			for _, d := range Schedule(s, heads) {
				if d.Workload == p {
					victims = d.Victims
				}
			}
			if cpu := victimsCPU(victims); len(victims) != 4 || cpu != 20_000 {
				t.Errorf("large-p (20 cpu) evicts %d mediums, %d millicpu; want 4, 20000", len(victims), cpu)
			}
		})
	}
}

// TestPreemptorWaitsForItsVictimsThenAllShare: the cycle after, p's
// victims are evicting and every large waits for them, none choosing
// more; once they are gone the 20 cpu they freed go to one large, and a
// large that preempts then evicts for its own 20 cpu only.
func TestPreemptorWaitsForItsVictimsThenAllShare(t *testing.T) {
	c, heads, p := heldRoomWorld(8)
	now := coretest.Epoch.Add(time.Hour)
	s := c.Snapshot()
	s.SetNow(now)
	var victims []Victim
	for _, d := range Schedule(s, heads) {
		if d.Workload == p {
			victims = d.Victims
		}
	}
	for _, v := range victims {
		w := *v.Workload
		w.Evicting = true
		c.AddOrUpdateWorkload(&w)
	}
	s = c.Snapshot()
	s.SetNow(now.Add(500 * time.Millisecond))
	for _, d := range Schedule(s, heads) {
		if len(d.Victims) > 0 || d.Admission != nil {
			t.Errorf("victims evicting: %s decided %d victims, admitted %v; want everyone waiting", d.Workload.Name, len(d.Victims), d.Admission != nil)
		}
	}
	for _, v := range victims {
		c.DeleteWorkload(v.Workload.Key)
	}
	s = c.Snapshot()
	s.SetNow(now.Add(time.Second))
	admitted := 0
	for _, d := range Schedule(s, heads) {
		if d.Admission != nil {
			admitted++
		}
		if cpu := victimsCPU(d.Victims); cpu > 20_000 {
			t.Errorf("%s evicts %d victims of %d millicpu for its 20 cpu", d.Workload.Name, len(d.Victims), cpu)
		}
	}
	if admitted != 1 {
		t.Errorf("%d larges admitted into the 20 cpu freed, want 1", admitted)
	}
}

// TestReservationHoldsOnlyWhatItsQueueCouldTake: a starving workload's
// reservation sets aside the same way (holdable): queue a's 8 GPUs are
// lent to b but for 2, so a holds 2, and the cohort's usage stays within
// its quota instead of 6 past it.
func TestReservationHoldsOnlyWhatItsQueueCouldTake(t *testing.T) {
	a, b := coretest.GPUQueue("a", coretest.GPUs("a100", 8)), coretest.GPUQueue("b", coretest.GPUs("a100", 8))
	a.Cohort, b.Cohort = "co", "co"
	a.StarvationAfter = 30 * time.Minute
	c := cacheWith([]*core.ClusterQueue{a, b}, "a100")
	c.AddOrUpdateWorkload(coretest.Admitted(coretest.GPUWorkload("borrowing", 0, 0, 14, 1), "b", "a100"))
	s := c.Snapshot()
	s.SetNow(coretest.Epoch.Add(time.Hour))
	Schedule(s, map[string][]*core.Workload{"a": {coretest.GPUWorkload("big", 0, 0, 8, 1)}})
	gpu := core.FlavorResource{Flavor: "a100", Resource: coretest.GPU}
	root := s.Queue("a").Tree.Root()
	if used, quota := root.Usage[gpu], root.Subtree[gpu]; used > quota {
		t.Errorf("the cohort uses %d of its %d GPUs with a's reservation: room it does not have was held", used, quota)
	}
	if got := s.Queue("a").Tree.Usage[gpu]; got != 2 {
		t.Errorf("a holds %d GPUs, want the 2 its cohort has free", got)
	}
}
