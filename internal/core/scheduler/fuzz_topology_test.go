package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/topology"
)

// FuzzTopologyInvariants drives random clusters (nodes of random sizes in
// racks, some with unmanaged pods, some failing), random topology
// workloads and preemption through cycles as the scheduler does, and
// checks that no node is ever promised more than it has: the placements
// of every admitted workload plus the unmanaged pods fit each node's
// allocatable GPUs and pod slots; a required placement sits in one domain;
// and no admitted workload keeps pods on a failed node.
func FuzzTopologyInvariants(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 42, 7, 1234} {
		f.Add(seed, uint8(12), uint8(40))
	}
	f.Fuzz(func(t *testing.T, seed uint64, nNodes, nWorkloads uint8) {
		rng := rand.New(rand.NewPCG(seed, seed^0x51ed27))
		cq := tasQueue("cq", int64(rng.IntN(200)+8))
		cq.Preemption.WithinClusterQueue = core.PreemptLowerPriority
		c := tasCache(t, 0, 0, 0, cq)
		nodes, pods := randomNodes(rng, c, int(nNodes%24)+1)
		var pending []*core.Workload
		for i := range int(nWorkloads) {
			pending = append(pending, randomTopologyWorkload(rng, i))
		}
		for cycle := 0; cycle < 20; cycle++ {
			ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": pending})
			pending = applyTopology(t, c, ds, pending)
			checkNodes(t, c, nodes, pods)
			if rng.IntN(4) == 0 { // a node fails or comes back
				n := nodes[rng.IntN(len(nodes))]
				n.Ready = !n.Ready
				c.SetNode(cloneNode(n))
			}
			finishTopology(rng, c, &pending)
		}
	})
}

// randomNodes adds n nodes to the cache and, on some, a pod Muster does
// not manage, returned as well.
func randomNodes(rng *rand.Rand, c *testCache, n int) ([]*core.Node, []*core.Pod) {
	var out []*core.Node
	var pods []*core.Pod
	for i := range n {
		nd := gpuNode(fmt.Sprintf("b1-r%d-n%d", i%3+1, i), int64(rng.IntN(8)+1))
		nd.Pods = int64(rng.IntN(6) + 1)
		c.SetNode(cloneNode(nd))
		if rng.IntN(3) == 0 {
			p := &core.Pod{Node: nd.Name, Requests: core.Requests{gpu: min(int64(rng.IntN(3)), nd.Allocatable[gpu])}}
			c.SetPod(fmt.Sprintf("x/%d", i), p)
			pods = append(pods, p)
		}
		out = append(out, nd)
	}
	return out, pods
}

func cloneNode(n *core.Node) *core.Node { c := *n; return &c }

func randomTopologyWorkload(rng *rand.Rand, i int) *core.Workload {
	modes := []topology.Mode{topology.Required, topology.Preferred, topology.Unconstrained}
	levels := []string{rackLabel, hostLabel}
	mode := modes[rng.IntN(3)]
	level := levels[rng.IntN(2)]
	if mode == topology.Unconstrained {
		level = ""
	}
	return tasWl(fmt.Sprintf("w%d", i), int32(rng.IntN(3)), i, int32(rng.IntN(4)+1), int64(rng.IntN(4)+1), mode, level)
}

// applyTopology assumes admissions and replacements, evicts victims and
// failed placements at once, and returns what is still pending.
func applyTopology(t *testing.T, c *testCache, ds []Decision, pending []*core.Workload) []*core.Workload {
	t.Helper()
	admittedNow := map[string]bool{}
	for _, d := range ds {
		switch {
		case d.Evict != NoEviction:
			c.DeleteWorkload(d.Workload.Key)
			pending = append(pending, unadmitted(d.Workload))
		case d.Admission != nil && d.Workload.Admission != nil: // repaired
			w := *d.Workload
			w.Admission = d.Admission
			c.AddOrUpdateWorkload(&w)
		case d.Admission != nil:
			w := *d.Workload
			w.Admission = d.Admission
			if err := c.Assume(&w); err != nil {
				t.Fatal(err)
			}
			admittedNow[w.Key] = true
			checkDomain(t, &w)
		}
		for _, v := range d.Victims {
			c.DeleteWorkload(v.Workload.Key)
			pending = append(pending, unadmitted(v.Workload))
		}
	}
	var still []*core.Workload
	for _, w := range pending {
		if !admittedNow[w.Key] && !c.HoldsQuota(w.Key) {
			still = append(still, w)
		}
	}
	return still
}

func unadmitted(w *core.Workload) *core.Workload {
	out := *w
	out.Admission, out.Evicting = nil, false
	return &out
}

// checkDomain checks a required placement sits in one domain.
func checkDomain(t *testing.T, w *core.Workload) {
	t.Helper()
	for i, ps := range w.Admission.PodSets {
		req := w.PodSets[i].Topology
		if ps.Placement == nil || req == nil || req.Mode != topology.Required {
			continue
		}
		l := map[string]int{rackLabel: 1, hostLabel: 2}[req.Level]
		seen := map[string]bool{}
		for _, d := range ps.Placement.Domains {
			seen[fmt.Sprint(d.Values[:l+1])] = true
		}
		if len(seen) != 1 {
			t.Fatalf("%s requires one %s, placed in %v", w.Key, req.Level, seen)
		}
	}
}

// checkNodes sums what each node holds: unmanaged pods and placements.
func checkNodes(t *testing.T, c *testCache, nodes []*core.Node, unmanaged []*core.Pod) {
	t.Helper()
	gpus, pods, placed := map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, p := range unmanaged {
		gpus[p.Node] += p.Requests[gpu]
		pods[p.Node]++
	}
	for _, w := range admittedIn(c) {
		for _, ps := range w.Admission.PodSets {
			if ps.Placement == nil {
				continue
			}
			for _, n := range ps.Placement.Nodes {
				gpus[n.Name] += int64(n.Count) * ps.Placement.Request[gpu]
				pods[n.Name] += int64(n.Count)
				placed[n.Name] += int64(n.Count)
			}
		}
	}
	for _, n := range nodes {
		// n is the node as last given to the cache.
		cur := n
		if !cur.Ready && placed[n.Name] > 0 {
			t.Fatalf("node %s failed before this cycle and still holds %d placed pods", n.Name, placed[n.Name])
		}
		if gpus[n.Name] > n.Allocatable[gpu] || pods[n.Name] > n.Pods {
			// A node that failed keeps what was on it until repaired;
			// only a node that accepted new pods must never be over.
			if cur.Ready {
				t.Fatalf("node %s promised %d GPUs and %d pods, has %d and %d", n.Name, gpus[n.Name], pods[n.Name], n.Allocatable[gpu], n.Pods)
			}
		}
	}
}

func finishTopology(rng *rand.Rand, c *testCache, pending *[]*core.Workload) {
	for _, w := range admittedIn(c) {
		if rng.IntN(5) == 0 {
			c.DeleteWorkload(w.Key)
		}
	}
}

// admittedIn is every workload the cache holds quota for, in key order.
func admittedIn(c *testCache) []*core.Workload {
	var out []*core.Workload
	for _, q := range c.Snapshot().Queues {
		out = append(out, sortedWorkloads(q.Workloads)...)
	}
	return out
}

// TestVictimsExistAgreesWithThePlan: the question a preemptor waiting its
// delay asks every cycle (is there a set of unprotected victims?) gets
// the answer the full plan gives, on the random clusters and workloads
// of FuzzTopologyInvariants, with and without topology in the way.
func TestVictimsExistAgreesWithThePlan(t *testing.T) {
	var a agreement
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, seed^0x51ed27))
		cq := tasQueue("cq", int64(rng.IntN(200)+8))
		cq.Preemption.WithinClusterQueue = core.PreemptLowerPriority
		c := tasCache(t, 0, 0, 0, cq)
		nodes, _ := randomNodes(rng, c, rng.IntN(24)+1)
		var pending []*core.Workload
		for i := range rng.IntN(40) + 1 {
			pending = append(pending, randomTopologyWorkload(rng, i))
		}
		for range 10 {
			s := c.Snapshot()
			for _, wl := range pending {
				a.check(t, s, s.Queue("cq"), wl, fmt.Sprintf("seed %d", seed))
			}
			pending = applyTopology(t, c, Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": pending}), pending)
			if rng.IntN(4) == 0 {
				n := nodes[rng.IntN(len(nodes))]
				n.Ready = !n.Ready
				c.SetNode(cloneNode(n))
			}
			finishTopology(rng, c, &pending)
		}
	}
	a.exercised(t, 100)
}
