package quota

import (
	"math"
	"time"

	"github.com/musterhq/muster/internal/core"
)

// DecayConfig is how past usage counts in fair sharing
// (fairSharing.usage): each half-life, what a queue used before weighs half
// as much, so a team that ran 64 GPUs all night does not start the morning
// level with one that ran nothing, and one that stopped is forgiven in a
// few half-lives.
type DecayConfig struct {
	// HalfLife is how long until past usage weighs half; 0 keeps none of
	// it (the decayed usage is the current usage).
	HalfLife time.Duration
	// Weights scale each resource's share (by resource name, e.g.
	// nvidia.com/gpu: 4); a resource not named weighs 1.
	Weights map[string]float64
}

// weight is a resource's weight in a decayed share.
func (c DecayConfig) weight(resource string) float64 {
	if w, ok := c.Weights[resource]; ok {
		return w
	}
	return 1
}

// alpha is the weight a sample of the current usage gets after elapsed:
// 1 - 2^(-elapsed/halfLife), so that sampling more or less often gives the
// same decay (two samples half a half-life apart decay as one a half-life
// apart).
func (c DecayConfig) alpha(elapsed time.Duration) float64 {
	if c.HalfLife <= 0 {
		return 1
	}
	if elapsed <= 0 {
		return 0
	}
	return 1 - math.Pow(0.5, elapsed.Seconds()/c.HalfLife.Seconds())
}

// DecayedUsage is a node's usage averaged over time with exponential
// decay, per flavor and resource, in the core's units, and when it was
// last sampled.
type DecayedUsage struct {
	Usage map[core.FlavorResource]float64
	At    time.Time
}

// Sample folds the usage held since the last sample into the average: the
// past decays by alpha(now - At), the current usage enters with weight
// alpha. The first sample starts from the current usage, so a queue that
// appears (or a manager that starts without a kept value) does not look
// idle and get everything first.
func (d DecayedUsage) Sample(current core.Usage, now time.Time, c DecayConfig) DecayedUsage {
	out := DecayedUsage{Usage: make(map[core.FlavorResource]float64, len(current)), At: now}
	if d.At.IsZero() {
		for fr, v := range current {
			out.Usage[fr] = float64(v)
		}
		return out
	}
	a := c.alpha(now.Sub(d.At))
	for fr, v := range d.Usage {
		if kept := v * (1 - a); kept >= 1e-9 {
			out.Usage[fr] = kept
		}
	}
	for fr, v := range current {
		out.Usage[fr] += a * float64(v)
	}
	return out
}

// Add counts an admission at once (Kueue's entry penalty): between two
// samples, workloads admitted to the queue with the lowest decayed share
// would otherwise all go to it. It adds what one sample interval of the
// usage would add.
func (d DecayedUsage) Add(u core.Usage, sampling time.Duration, c DecayConfig) DecayedUsage {
	out := DecayedUsage{Usage: make(map[core.FlavorResource]float64, len(d.Usage)+len(u)), At: d.At}
	for fr, v := range d.Usage {
		out.Usage[fr] = v
	}
	a := c.alpha(sampling)
	for fr, v := range u {
		out.Usage[fr] += a * float64(v)
	}
	return out
}

// DecayedShare is the DRF share over decayed usage, in thousandths
// divided by the node's weight (in thousandths, as node.weight): the
// largest, over flavor-resources, of the weighted decayed usage beyond the
// node's own subtree quota over its parent's pool. With a zero half-life
// and no weights it is the share of the current usage.
func DecayedShare(d DecayedUsage, subtree, parentPool core.Usage, weight int64, c DecayConfig) int64 {
	dominant := 0.0
	for fr, used := range d.Usage {
		borrowed := used - float64(subtree[fr])
		pool := float64(parentPool[fr])
		if borrowed <= 0 || pool <= 0 {
			continue
		}
		dominant = math.Max(dominant, c.weight(fr.Resource)*borrowed*1000/pool)
	}
	if dominant == 0 {
		return 0
	}
	if weight <= 0 {
		return math.MaxInt64
	}
	s := dominant * 1000 / float64(weight)
	if s >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(s)
}

// usageDecay is the cache's decayed usage of every ClusterQueue and cohort
// (fairSharing.usage), with what was admitted since the last sample.
type usageDecay struct {
	cfg DecayConfig
	// sampling is how often SampleUsage runs; an admission between two
	// samples counts at once as alpha(sampling) of its usage.
	sampling time.Duration
	// byNode is keyed by nodeKey.
	byNode map[string]DecayedUsage
	// admitted is the usage admitted to each ClusterQueue since the last
	// sample, and admittedLQ to each LocalQueue.
	admitted   map[string]core.Usage
	admittedLQ map[string]core.Usage
}

// nodeKey names a ClusterQueue or a cohort in the decay maps (a cohort and
// a queue may share a name).
func nodeKey(n *TreeNode) string {
	if n.Queue != nil {
		return "cq/" + n.Name
	}
	return "cohort/" + n.Name
}

// SetUsageDecay turns usage-decayed fair sharing on (a zero sampling turns
// it off): the fair-sharing tournament then orders cohorts and queues by
// their decayed usage instead of their current usage. Preemption keeps
// comparing current usage: no workload is evicted for what its queue ran
// yesterday.
func (c *Cache) SetUsageDecay(cfg DecayConfig, sampling time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sampling <= 0 {
		c.decay = nil
		return
	}
	c.decay = &usageDecay{cfg: cfg, sampling: sampling, byNode: map[string]DecayedUsage{}, admitted: map[string]core.Usage{},
		admittedLQ: map[string]core.Usage{}}
}

// SampleUsage folds every queue's and cohort's current usage into its
// decayed usage, as of now.
func (c *Cache) SampleUsage(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.decay == nil {
		return
	}
	snap := c.quotaSnapshot(c.queues)
	next := make(map[string]DecayedUsage, len(snap.Queues)+len(snap.Cohorts))
	sample := func(n *TreeNode) {
		k := nodeKey(n)
		next[k] = c.decay.byNode[k].Sample(n.Usage, now, c.decay.cfg)
	}
	for _, q := range snap.Queues {
		sample(q.Tree)
	}
	for _, n := range snap.Cohorts {
		sample(n)
	}
	c.sampleLocalQueues(now, next)
	c.decay.byNode = next
	c.decay.admitted = map[string]core.Usage{}
}

// RestoreDecayedUsage sets a queue's or cohort's decayed usage as a status
// kept it, so that a restart starts where the last manager left
// (cohort false: a ClusterQueue).
func (c *Cache) RestoreDecayedUsage(name string, cohort bool, d DecayedUsage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.decay == nil {
		return
	}
	k := "cq/" + name
	if cohort {
		k = "cohort/" + name
	}
	if _, known := c.decay.byNode[k]; !known {
		c.decay.byNode[k] = d
	}
}

// DecayedUsageOf returns a queue's or cohort's decayed usage (with what
// was admitted since the last sample), for its status.
func (c *Cache) DecayedUsageOf(name string, cohort bool) (DecayedUsage, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.decay == nil {
		return DecayedUsage{}, false
	}
	k := "cq/" + name
	if cohort {
		k = "cohort/" + name
	}
	d, ok := c.decay.byNode[k]
	if !cohort {
		d = d.Add(c.decay.admitted[name], c.decay.sampling, c.decay.cfg)
	}
	return d, ok
}

// recordAdmitted counts a workload that newly holds quota toward its
// queue's decayed usage until the next sample. The caller holds the lock.
func (c *Cache) recordAdmitted(clusterQueue string, u core.Usage) {
	if c.decay == nil {
		return
	}
	sum := c.decay.admitted[clusterQueue]
	if sum == nil {
		sum = core.Usage{}
		c.decay.admitted[clusterQueue] = sum
	}
	sum.Add(u)
}

// decayNodes gives a snapshot's nodes their decayed usage: the sampled
// value plus, for each queue and the cohorts above it, what it was
// admitted since (at cohorts in full: an over-estimate of what bubbles up
// beyond the queues' own quota, by at most one sampling interval's worth).
// The caller holds the lock.
func (c *Cache) decayNodes(s *Snapshot) {
	if c.decay == nil {
		return
	}
	s.decay = c.decay
	for _, q := range s.Queues {
		d := c.decay.byNode[nodeKey(q.Tree)]
		q.Tree.decayed = &d
	}
	for _, n := range s.Cohorts {
		d := c.decay.byNode[nodeKey(n)]
		n.decayed = &d
	}
	for name, u := range c.decay.admitted {
		q := s.Queues[name]
		if q == nil {
			continue
		}
		for n := q.Tree; n != nil; n = n.Parent {
			d := n.decayed.Add(u, c.decay.sampling, c.decay.cfg)
			n.decayed = &d
		}
	}
}

// fairShare is the share the fair-sharing tournament compares: over the
// decayed usage when usage decay is on, the current usage otherwise.
func (n *TreeNode) fairShare(decay *usageDecay) int64 {
	if decay == nil || n.decayed == nil || n.Parent == nil {
		return n.Share()
	}
	return DecayedShare(*n.decayed, n.Subtree, n.Parent.Subtree, n.weight, decay.cfg)
}

// CountDecayed adds an admission decided in the cycle to the decayed usage
// of its queue and the cohorts above, so the cycle's next pick sees it.
func (s *Snapshot) CountDecayed(q *QueueSnapshot, u core.Usage) {
	if s.decay == nil {
		return
	}
	for n := q.Tree; n != nil; n = n.Parent {
		if n.decayed != nil {
			d := n.decayed.Add(u, s.decay.sampling, s.decay.cfg)
			n.decayed = &d
		}
	}
}

// decayAdmitted is what was admitted to a queue since the last sample (nil
// without decay or admissions). The caller holds the lock.
func (c *Cache) decayAdmitted(clusterQueue string) core.Usage {
	if c.decay == nil {
		return nil
	}
	return c.decay.admitted[clusterQueue]
}

// ClusterQueueNames lists the ClusterQueues the cache knows.
func (c *Cache) ClusterQueueNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.queues))
	for name := range c.queues {
		out = append(out, name)
	}
	return out
}

// FairShare is a node's share for the fair-sharing tournament: of its
// decayed usage with usage decay on, else of its usage now.
func (s *Snapshot) FairShare(n *TreeNode) int64 { return n.fairShare(s.decay) }
