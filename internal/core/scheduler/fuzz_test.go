package scheduler

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/queue"
	"github.com/musterhq/muster/internal/core/quota"
)

// FuzzScheduleInvariants drives random cohort trees, quotas, limits,
// policies and workloads through cycles as the scheduler does (admissions
// assumed, victims evicted a cycle later, random finishes) and checks:
// usage never exceeds what the tree allows; a cycle is deterministic;
// reclaim never takes from a queue within its nominal quota; within a queue
// a workload never preempts one of higher priority.
func FuzzScheduleInvariants(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 42, 1234, 99, 7} {
		f.Add(seed, uint8(4), uint8(40), false)
		f.Add(seed, uint8(3), uint8(60), true)
	}
	f.Fuzz(func(t *testing.T, seed uint64, nQueues, nWorkloads uint8, fair bool) {
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		c, cqs := randomCache(rng, int(nQueues%6)+1)
		c.cfg.FairSharing = fair
		q := queue.NewQueues()
		// The tracker's policy decides, as in the controllers, who gets
		// another chance when quota is released.
		tr := &Tracker{Cache: c.Cache, Queues: q, Config: c.cfg}
		for _, cq := range cqs {
			q.UpsertLocalQueue("ns", cq.Name, cq.Name)
			q.UpsertClusterQueue(cq.Name, cq.Strategy)
		}
		for i := range int(nWorkloads) {
			q.AddOrUpdate(randomWorkload(rng, i, cqs))
		}
		var evicted []string
		for cycle := 0; cycle < 25; cycle++ {
			for _, key := range evicted { // victims' jobs stopped: quota released
				tr.Forget(key)
			}
			evicted = evicted[:0]
			snap := c.Snapshot()
			heads, seq := q.Heads()
			ds := Schedule(snap, heads)
			if again := Schedule(c.Snapshot(), heads); !sameDecisions(ds, again) {
				t.Fatalf("cycle %d: two runs on the same input decided differently", cycle)
			}
			for _, d := range ds {
				checkVictims(t, c.Snapshot(), d)
				evicted = append(evicted, apply(t, c, q, d, seq)...)
			}
			checkTree(t, c.Snapshot())
			finishSome(rng, tr)
		}
	})
}

// apply plays the shell: assume admissions, mark victims evicting.
func apply(t *testing.T, c *testCache, q *queue.Queues, d Decision, seq uint64) []string {
	var evicted []string
	for _, v := range d.Victims {
		c.MarkEvicting(v.Workload.Key)
		evicted = append(evicted, v.Workload.Key)
	}
	if d.Evict != NoEviction {
		c.MarkEvicting(d.Workload.Key)
		evicted = append(evicted, d.Workload.Key)
	}
	switch {
	case d.Admission != nil:
		w := *d.Workload
		w.Admission = d.Admission
		if err := c.Assume(&w); err != nil {
			t.Fatal(err)
		}
		q.Delete(w.Key)
	case d.Park:
		q.Park(d.Workload, seq)
	}
	return evicted
}

// finishSome finishes a random third of the admitted workloads.
func finishSome(rng *rand.Rand, tr *Tracker) {
	for _, cq := range tr.Snapshot().Queues {
		for key := range cq.Workloads {
			if rng.IntN(3) == 0 {
				tr.Forget(key)
			}
		}
	}
}

// checkTree: at every root usage fits the tree's quota; below it no node
// uses more of its parent than it lends plus its borrowing limit.
func checkTree(t *testing.T, s *Snapshot) {
	t.Helper()
	var visit func(n *quota.TreeNode)
	visit = func(n *quota.TreeNode) {
		for fr, used := range n.Usage {
			if n.Parent == nil {
				if used > n.Subtree[fr] {
					t.Fatalf("root %s uses %d of %v, its tree has %d", n.Name, used, fr, n.Subtree[fr])
				}
				continue
			}
			if q, ok := n.Own[fr]; ok && q.BorrowingLimit != nil {
				g := n.Guaranteed(fr)
				if max(0, used-g) > n.Subtree[fr]-g+*q.BorrowingLimit {
					t.Fatalf("%s borrows beyond its limit of %v: uses %d, quota %d, limit %d", n.Name, fr, used, n.Subtree[fr], *q.BorrowingLimit)
				}
			}
		}
		for _, c := range n.Children {
			visit(c)
		}
	}
	seen := map[*quota.TreeNode]bool{}
	for _, q := range s.Queues {
		if r := q.Tree.Root(); !seen[r] {
			seen[r] = true
			visit(r)
		}
	}
}

// checkVictims: reclaim only from borrowing queues; within a queue only
// lower priority, or equal and newer.
func checkVictims(t *testing.T, s *Snapshot, d Decision) {
	t.Helper()
	for _, v := range d.Victims {
		vq := s.Queue(v.Queue)
		switch v.Reason {
		case InClusterQueue:
			if v.Workload.Priority > d.Workload.Priority {
				t.Fatalf("%s (priority %d) preempted %s of higher priority %d in its queue", d.Workload.Key, d.Workload.Priority, v.Workload.Key, v.Workload.Priority)
			}
		default:
			borrowing := false
			for fr := range vq.Tree.Usage {
				borrowing = borrowing || vq.Tree.Borrowing(fr)
			}
			if !borrowing {
				t.Fatalf("%s reclaimed %s from queue %s, which is within its nominal quota", d.Workload.Key, v.Workload.Key, v.Queue)
			}
		}
	}
}

func sameDecisions(a, b []Decision) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Workload.Key != b[i].Workload.Key || !a[i].Pending.Equal(&b[i].Pending) || a[i].Evict != b[i].Evict ||
			!reflect.DeepEqual(a[i].Admission, b[i].Admission) || len(a[i].Victims) != len(b[i].Victims) {
			return false
		}
		for j := range a[i].Victims {
			if a[i].Victims[j].Workload.Key != b[i].Victims[j].Workload.Key {
				return false
			}
		}
	}
	return true
}

func randomCache(rng *rand.Rand, n int) (*testCache, []*core.ClusterQueue) {
	c := newTestCache()
	flavors := []string{"a100", "h100", "cpu-only"}
	for _, f := range flavors {
		c.UpsertFlavor(&core.Flavor{Name: f})
	}
	cohorts := []string{"", "left", "right"}
	c.UpsertCohort(&core.Cohort{Name: "left", Parent: "org", Weight: 1000})
	c.UpsertCohort(&core.Cohort{Name: "right", Parent: "org", Weight: int64(rng.IntN(3)) * 1000,
		ResourceGroups: []core.ResourceGroup{{Resources: []string{"cpu", "nvidia.com/gpu"},
			Flavors: []core.FlavorQuotas{coretest.Quotas("a100", map[string]int64{"cpu": int64(rng.IntN(16)), "nvidia.com/gpu": int64(rng.IntN(4))})}}}})
	policies := []core.PreemptionPolicy{core.PreemptNever, core.PreemptLowerPriority, core.PreemptLowerOrNewerEqualPriority}
	var cqs []*core.ClusterQueue
	for i := range n {
		var fqs []core.FlavorQuotas
		for _, f := range flavors[:1+rng.IntN(len(flavors))] {
			fq := coretest.Quotas(f, map[string]int64{"cpu": int64(rng.IntN(64)), "nvidia.com/gpu": int64(rng.IntN(16))})
			if rng.IntN(3) == 0 {
				fq = limited(fq, "nvidia.com/gpu", int64(rng.IntN(4)), -1)
			}
			if rng.IntN(3) == 0 {
				fq = limited(fq, "cpu", -1, int64(rng.IntN(int(fq.Resources["cpu"].Nominal/1000)+1)))
			}
			fqs = append(fqs, fq)
		}
		cq := &core.ClusterQueue{
			Name: fmt.Sprintf("cq%d", i), NamespaceSelector: coretest.Everything{}, Cohort: cohorts[rng.IntN(len(cohorts))],
			Weight:         int64(1+rng.IntN(3)) * 500,
			ResourceGroups: []core.ResourceGroup{{Resources: []string{"cpu", "nvidia.com/gpu"}, Flavors: fqs}},
			Preemption: core.Preemption{
				WithinClusterQueue:  policies[rng.IntN(3)],
				ReclaimWithinCohort: []core.PreemptionPolicy{core.PreemptNever, core.PreemptLowerPriority, core.PreemptAny}[rng.IntN(3)],
			},
			Fungibility: core.FlavorFungibility{StopAtBorrow: rng.IntN(2) == 0, StopAtPreempt: rng.IntN(2) == 0},
		}
		if cq.Preemption.ReclaimWithinCohort != core.PreemptNever && rng.IntN(2) == 0 {
			cq.Preemption.BorrowWithinCohort = core.PreemptLowerPriority
		}
		if rng.IntN(3) == 0 {
			cq.Strategy = core.StrictFIFO
		}
		c.UpsertClusterQueue(cq)
		cqs = append(cqs, cq)
	}
	return c, cqs
}

func randomWorkload(rng *rand.Rand, i int, cqs []*core.ClusterQueue) *core.Workload {
	w := &core.Workload{
		Key: fmt.Sprintf("ns/w%03d", i), Namespace: "ns", Name: fmt.Sprintf("w%03d", i),
		Queue: cqs[rng.IntN(len(cqs))].Name, Priority: int32(rng.IntN(3)), Created: coretest.Epoch.Add(timeFromInt(rng.IntN(100))),
	}
	for p := range 1 + rng.IntN(2) {
		w.PodSets = append(w.PodSets, core.PodSet{
			Name: fmt.Sprintf("ps%d", p), Count: int32(1 + rng.IntN(4)),
			Requests: core.Requests{"cpu": int64(rng.IntN(8000)), "nvidia.com/gpu": int64(rng.IntN(4))},
		})
	}
	return w
}
