package scheduler

import (
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/queue"
	"github.com/musterhq/muster/internal/core/quota"
)

// Test builders for the core's model.

func cacheWith(cqs []*core.ClusterQueue, flavors ...string) *testCache {
	c := newTestCache()
	for _, f := range flavors {
		c.UpsertFlavor(&core.Flavor{Name: f})
	}
	for _, cq := range cqs {
		c.UpsertClusterQueue(cq)
	}
	return c
}

func names(ds []Decision, admittedOnly bool) []string {
	var out []string
	for _, d := range ds {
		if !admittedOnly || d.Admission != nil {
			out = append(out, d.Workload.Name)
		}
	}
	return out
}

func time_(s int) time.Duration { return time.Duration(s) * time.Second }

var timeFromInt = time_

// testCache is a quota cache and the scheduler policy a test runs its
// cycles on it under.
type testCache struct {
	*quota.Cache
	cfg Config
}

func newTestCache() *testCache { return &testCache{Cache: quota.NewCache()} }

// Snapshot is a cycle on a copy of the cache, under the test's policy.
func (c *testCache) Snapshot() *Snapshot { return NewSnapshot(c.Cache, c.cfg) }

var gpuA100 = core.FlavorResource{Flavor: "a100", Resource: "nvidia.com/gpu"}

func headsOf(q *queue.Queues) map[string][]*core.Workload { h, _ := q.Heads(); return h }
func seqOf(q *queue.Queues) uint64                        { _, s := q.Heads(); return s }

func headNames(q *queue.Queues, cq string) []string {
	var out []string
	for _, w := range headsOf(q)[cq] {
		out = append(out, w.Name)
	}
	return out
}
