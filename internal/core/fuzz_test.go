package core

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// FuzzScheduleNeverOversubscribes drives random queues, flavors, workloads
// and finishes through several cycles, as the scheduler does, and checks
// that no ClusterQueue ever holds more than its quota of any flavor-resource.
func FuzzScheduleNeverOversubscribes(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 42, 1234} {
		f.Add(seed, uint8(3), uint8(40))
	}
	f.Fuzz(func(t *testing.T, seed uint64, nQueues, nWorkloads uint8) {
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		c, cqs := randomCache(rng, int(nQueues%6)+1)
		q := NewQueues()
		for _, cq := range cqs {
			q.UpsertLocalQueue("ns", cq.Name, cq.Name)
			q.UpsertClusterQueue(cq.Name, cq.Strategy)
		}
		var pending []*Workload
		for i := range int(nWorkloads) {
			w := randomWorkload(rng, i, cqs)
			pending = append(pending, w)
			q.AddOrUpdate(w)
		}
		var running []*Workload
		for cycle := 0; cycle < 20; cycle++ {
			for _, d := range Schedule(c.Snapshot(), q.Heads()) {
				if d.Admission == nil {
					if d.Park {
						q.Park(d.Workload.Key)
					}
					continue
				}
				w := *d.Workload
				w.Admission = d.Admission
				if err := c.Assume(&w); err != nil {
					t.Fatal(err)
				}
				q.Delete(w.Key)
				running = append(running, &w)
			}
			checkQuota(t, c, cqs)
			// Finish a random half of the running workloads.
			kept := running[:0]
			for _, w := range running {
				if rng.IntN(2) == 0 {
					q.Unpark(c.DeleteWorkload(w.Key))
				} else {
					kept = append(kept, w)
				}
			}
			running = kept
		}
		_ = pending
	})
}

func checkQuota(t *testing.T, c *Cache, cqs []*ClusterQueue) {
	t.Helper()
	for _, cq := range cqs {
		for fr, used := range c.ClusterQueueStatus(cq.Name).Usage {
			quota, ok := cq.quota(fr)
			if !ok || used > quota.Nominal {
				t.Fatalf("ClusterQueue %s uses %d of %v, quota %d", cq.Name, used, fr, quota.Nominal)
			}
		}
	}
}

func randomCache(rng *rand.Rand, n int) (*Cache, []*ClusterQueue) {
	c := NewCache()
	flavors := []string{"a100", "h100", "cpu-only"}
	for _, f := range flavors {
		c.UpsertFlavor(&Flavor{Name: f})
	}
	var cqs []*ClusterQueue
	for i := range n {
		var fqs []FlavorQuotas
		for _, f := range flavors[:1+rng.IntN(len(flavors))] {
			fqs = append(fqs, quotas(f, map[string]int64{"cpu": int64(rng.IntN(64)), "nvidia.com/gpu": int64(rng.IntN(16))}))
		}
		cq := &ClusterQueue{Name: fmt.Sprintf("cq%d", i), ResourceGroups: []ResourceGroup{{Resources: []string{"cpu", "nvidia.com/gpu"}, Flavors: fqs}}}
		if rng.IntN(3) == 0 {
			cq.Strategy = StrictFIFO
		}
		c.UpsertClusterQueue(cq)
		cqs = append(cqs, cq)
	}
	return c, cqs
}

func randomWorkload(rng *rand.Rand, i int, cqs []*ClusterQueue) *Workload {
	w := &Workload{
		Key: fmt.Sprintf("ns/w%d", i), Namespace: "ns", Name: fmt.Sprintf("w%d", i),
		Queue: cqs[rng.IntN(len(cqs))].Name, Priority: int32(rng.IntN(3)), Created: epoch,
	}
	for p := range 1 + rng.IntN(2) {
		w.PodSets = append(w.PodSets, PodSet{
			Name: fmt.Sprintf("ps%d", p), Count: int32(1 + rng.IntN(4)),
			Requests: Requests{"cpu": int64(rng.IntN(8000)), "nvidia.com/gpu": int64(rng.IntN(4)) * 1000},
		})
	}
	return w
}
