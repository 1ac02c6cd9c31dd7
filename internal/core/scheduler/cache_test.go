package scheduler

import (
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/quota"
)

func gpuUsage(c *testCache, cq string) int64 {
	return c.ClusterQueueStatus(cq).Usage[core.FlavorResource{Flavor: "a100", Resource: "nvidia.com/gpu"}]
}

func TestCacheAssumeForgetConfirm(t *testing.T) {
	c := cacheWith([]*core.ClusterQueue{coretest.GPUQueue("cq", coretest.GPUs("a100", 8))}, "a100")
	w := coretest.Admitted(coretest.GPUWorkload("w", 0, 0, 2, 2), "cq", "a100")
	if err := c.Assume(w); err != nil {
		t.Fatal(err)
	}
	if err := c.Assume(w); err == nil {
		t.Error("assumed twice")
	}
	if got := gpuUsage(c, "cq"); got != 4 {
		t.Errorf("usage after assume = %d", got)
	}
	if c.ReleaseConfirmed(w.Key) != "" || !c.HoldsQuota(w.Key) {
		t.Error("a stale pending view released an assumed workload")
	}
	c.Forget(w.Key)
	if got := gpuUsage(c, "cq"); got != 0 {
		t.Errorf("usage after forget = %d", got)
	}

	_ = c.Assume(w)
	c.AddOrUpdateWorkload(w) // the API confirms
	c.Forget(w.Key)          // a late failure must not undo a confirmed admission
	if got := gpuUsage(c, "cq"); got != 4 {
		t.Errorf("usage after confirm+forget = %d", got)
	}
	if cq := c.ReleaseConfirmed(w.Key); cq != "cq" || gpuUsage(c, "cq") != 0 {
		t.Errorf("evicted workload not released: %q", cq)
	}
}

// TestCacheRebuildInAnyOrder: workloads may arrive before their queue and
// flavors; the usage is the same either way.
func TestCacheRebuildInAnyOrder(t *testing.T) {
	a := coretest.Admitted(coretest.GPUWorkload("a", 0, 0, 1, 3), "cq", "a100")
	b := coretest.Admitted(coretest.GPUWorkload("b", 0, 0, 1, 2), "cq", "a100")
	orders := [][]func(*testCache){
		{addQueue, addFlavor, addWl(a), addWl(b)},
		{addWl(b), addWl(a), addQueue, addFlavor},
		{addFlavor, addWl(a), addQueue, addWl(b)},
	}
	for i, order := range orders {
		c := newTestCache()
		for _, step := range order {
			step(c)
		}
		st := c.ClusterQueueStatus("cq")
		if st.Reserving != 2 || gpuUsage(c, "cq") != 5 || st.Inactive != "" {
			t.Errorf("order %d: reserving %d usage %d inactive %q", i, st.Reserving, gpuUsage(c, "cq"), st.Inactive)
		}
	}
}

func addQueue(c *testCache) {
	c.UpsertClusterQueue(coretest.GPUQueue("cq", coretest.GPUs("a100", 8)))
}
func addFlavor(c *testCache) { c.UpsertFlavor(&core.Flavor{Name: "a100"}) }
func addWl(w *core.Workload) func(*testCache) {
	return func(c *testCache) { c.AddOrUpdateWorkload(w) }
}

func TestCacheInactiveWithoutFlavor(t *testing.T) {
	c := cacheWith([]*core.ClusterQueue{coretest.GPUQueue("cq", coretest.GPUs("a100", 8))})
	st := c.ClusterQueueStatus("cq")
	if st.Inactive != "ResourceFlavor a100 not found" || len(st.MissingFlavors) != 1 {
		t.Errorf("inactive = %q", st.Inactive)
	}
	addFlavor(c)
	if st := c.ClusterQueueStatus("cq"); st.Inactive != "" {
		t.Errorf("still inactive: %q", st.Inactive)
	}
}

func TestCacheInactiveWithoutGangScheduler(t *testing.T) {
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 8))
	cq.Gang = "Volcano"
	other := coretest.GPUQueue("other", coretest.GPUs("a100", 8))
	c := cacheWith([]*core.ClusterQueue{cq, other}, "a100")
	if got := c.SetGangServed("Volcano", false, "PodGroup not served"); !slices.Equal(got, []string{"cq"}) {
		t.Errorf("changed queues %v, want [cq]", got)
	}
	if got := c.SetGangServed("Volcano", false, "PodGroup not served"); got != nil {
		t.Errorf("unchanged report changed %v", got)
	}
	if st := c.ClusterQueueStatus("cq"); st.InactiveBecause != quota.GangMissing || st.Inactive != "PodGroup not served" {
		t.Errorf("status %v %q", st.InactiveBecause, st.Inactive)
	}
	if st := c.ClusterQueueStatus("other"); st.Inactive != "" {
		t.Errorf("other queue inactive: %q", st.Inactive)
	}
	ds := Schedule(c.Snapshot(), map[string][]*core.Workload{"cq": {coretest.GPUWorkload("w", 0, 0, 1, 1)}})
	if len(ds) != 1 || ds[0].Admission != nil {
		t.Fatalf("admitted in a queue without its gang scheduler: %+v", ds)
	}
	if got := c.SetGangServed("Volcano", true, ""); !slices.Equal(got, []string{"cq"}) {
		t.Errorf("changed queues %v, want [cq]", got)
	}
	if st := c.ClusterQueueStatus("cq"); st.Inactive != "" {
		t.Errorf("still inactive: %q", st.Inactive)
	}
}
