package core

// Snapshot is a consistent copy of the cache for one scheduling cycle. The
// cycle adds the usage of what it admits, so later decisions in the same
// cycle see it.
type Snapshot struct {
	queues  map[string]*QueueSnapshot
	flavors map[string]*Flavor
}

// QueueSnapshot is a ClusterQueue and its usage at the start of a cycle.
type QueueSnapshot struct {
	*ClusterQueue
	Usage Usage
	// Inactive says why the queue admits nothing, or is empty.
	Inactive string
}

// Queue returns a ClusterQueue of the snapshot, or nil.
func (s *Snapshot) Queue(name string) *QueueSnapshot { return s.queues[name] }

// Flavor returns a flavor of the snapshot, or nil.
func (s *Snapshot) Flavor(name string) *Flavor { return s.flavors[name] }

// Available is how much of a flavor-resource the queue can still use.
func (q *QueueSnapshot) Available(fr FlavorResource) int64 {
	quota, ok := q.quota(fr)
	if !ok {
		return 0
	}
	return max(quota.Nominal-q.Usage[fr], 0)
}

// AddUsage records usage admitted during the cycle.
func (q *QueueSnapshot) AddUsage(u Usage) {
	if q.Usage == nil {
		q.Usage = Usage{}
	}
	q.Usage.Add(u)
}
