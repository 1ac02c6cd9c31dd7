package quota

import (
	"fmt"

	"github.com/musterhq/muster/internal/core"
)

// MarkEvicting records that an admitted workload was told to stop, so no
// other preemptor picks it while its job winds down.
func (c *Cache) MarkEvicting(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cw, ok := c.workloads[key]; ok {
		wl := *cw.wl
		wl.Evicting = true
		cw.wl = &wl // cw is shared with byQueue
	}
}

// Assume records the admission the scheduler just decided, before the
// API write confirms it, so the next cycle already sees the quota taken.
func (c *Cache) Assume(wl *core.Workload) error {
	if wl.Admission == nil {
		return fmt.Errorf("workload %s has no admission to assume", wl.Key)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.workloads[wl.Key]; ok {
		return fmt.Errorf("workload %s already holds quota", wl.Key)
	}
	c.add(wl, true)
	c.recordAdmitted(wl.Admission.ClusterQueue, wl.Admission.Usage())
	c.recordAdmittedLQ(wl, wl.Admission.Usage())
	return nil
}

// Forget undoes Assume after a failed write. A workload the API has
// confirmed in the meantime is kept.
func (c *Cache) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cw, ok := c.workloads[key]; ok && cw.assumed {
		if u := c.decayAdmitted(cw.wl.Admission.ClusterQueue); u != nil {
			u.Sub(cw.usage)
		}
		if c.decay != nil && c.decay.admittedLQ[core.LocalQueueKey(cw.wl)] != nil {
			c.decay.admittedLQ[core.LocalQueueKey(cw.wl)].Sub(cw.usage)
		}
		c.remove(key)
	}
}

// AddOrUpdateWorkload records a workload the API shows holding quota. It
// reports whether the workload's pods just became ready, which may unblock
// admission.
func (c *Cache) AddOrUpdateWorkload(wl *core.Workload) (becameReady bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.workloads[wl.Key]
	becameReady = wl.PodsReady && (!ok || !old.wl.PodsReady)
	c.remove(wl.Key)
	c.add(wl, false)
	return becameReady
}

// DeleteWorkload releases a workload's quota. It returns the ClusterQueue
// that held it, or "" when the workload held none.
func (c *Cache) DeleteWorkload(key string) string { return c.release(key, false) }

// ReleaseConfirmed releases the quota of a workload the API has confirmed
// and now shows without admission (evicted, requeued). An assumed workload
// is kept: the API view may simply predate the scheduler's write. It returns
// the ClusterQueue that held the quota, or "".
func (c *Cache) ReleaseConfirmed(key string) string { return c.release(key, true) }

func (c *Cache) release(key string, keepAssumed bool) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	cw, ok := c.workloads[key]
	if !ok || (keepAssumed && cw.assumed) {
		return ""
	}
	c.remove(key)
	return cw.wl.Admission.ClusterQueue
}

// Reserving is the number of workloads holding quota in a ClusterQueue.
func (c *Cache) Reserving(clusterQueue string) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.byQueue[clusterQueue])
}

// HoldsQuota reports whether the cache counts a workload's quota.
func (c *Cache) HoldsQuota(key string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.workloads[key]
	return ok
}

func (c *Cache) add(wl *core.Workload, assumed bool) {
	u := wl.Admission.Usage()
	cw := &cachedWorkload{wl: wl, usage: u, assumed: assumed}
	c.workloads[wl.Key] = cw
	cq := wl.Admission.ClusterQueue
	if c.usage[cq] == nil {
		c.usage[cq] = core.Usage{}
		c.byQueue[cq] = map[string]*cachedWorkload{}
	}
	c.usage[cq].Add(u)
	c.byQueue[cq][wl.Key] = cw
	c.countLocalQueue(wl, u, 1)
	c.place(wl)
	if wl.AwaitingPlacement {
		c.unplaced[wl.Key] = true
	}
}

func (c *Cache) remove(key string) {
	cw, ok := c.workloads[key]
	if !ok {
		return
	}
	c.unplace(cw.wl)
	delete(c.unplaced, key)
	delete(c.workloads, key)
	cq := cw.wl.Admission.ClusterQueue
	c.usage[cq].Sub(cw.usage)
	c.countLocalQueue(cw.wl, cw.usage, -1)
	delete(c.byQueue[cq], key)
	if len(c.byQueue[cq]) == 0 {
		delete(c.usage, cq)
		delete(c.byQueue, cq)
	}
}
