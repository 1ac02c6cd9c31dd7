package core

import (
	"fmt"
	"strings"
)

// QueueStatus is what a ClusterQueue's status reports.
type QueueStatus struct {
	Exists bool
	// Borrowed is the usage beyond the queue's nominal quota.
	Borrowed Usage
	// WeightedShare is the queue's DRF share in thousandths (fair sharing).
	WeightedShare int64
	// Inactive says why the queue admits nothing, or is empty.
	Inactive       string
	MissingFlavors []string
	Reserving      int
	Usage          Usage
	// ByLocalQueue counts reserving workloads and usage per LocalQueue key
	// (namespace/name).
	ByLocalQueue map[string]*LocalQueueUsage
}

// LocalQueueUsage is what one LocalQueue's workloads hold.
type LocalQueueUsage struct {
	Reserving int
	Usage     Usage
}

// ClusterQueueStatus reports a ClusterQueue's state and usage.
func (c *Cache) ClusterQueueStatus(name string) QueueStatus {
	snap := c.Snapshot()
	c.mu.RLock()
	defer c.mu.RUnlock()
	cq, ok := c.queues[name]
	st := QueueStatus{Exists: ok, Usage: c.usage[name].Clone(), ByLocalQueue: map[string]*LocalQueueUsage{}}
	if ok {
		st.MissingFlavors = c.missingFlavors(cq)
		if q := snap.Queue(name); q != nil {
			st.Inactive = q.Inactive
			st.Borrowed = q.Borrowed()
			st.WeightedShare = q.node.share()
		}
	}
	for _, cw := range c.byQueue[name] {
		st.Reserving++
		lq := cw.wl.Namespace + "/" + cw.wl.Queue
		if st.ByLocalQueue[lq] == nil {
			st.ByLocalQueue[lq] = &LocalQueueUsage{Usage: Usage{}}
		}
		st.ByLocalQueue[lq].Reserving++
		st.ByLocalQueue[lq].Usage.Add(cw.usage)
	}
	return st
}

func (c *Cache) missingFlavors(cq *ClusterQueue) []string {
	var missing []string
	for _, f := range cq.flavorNames() {
		if _, ok := c.flavors[f]; !ok {
			missing = append(missing, f)
		}
	}
	return missing
}

func (c *Cache) inactiveReason(cq *ClusterQueue) string {
	if missing := c.missingFlavors(cq); len(missing) > 0 {
		return fmt.Sprintf("ResourceFlavor %s not found", strings.Join(missing, ", "))
	}
	if cq.Stop != Running {
		return "ClusterQueue is stopped"
	}
	return ""
}
