package quota

// Admission fair sharing between the LocalQueues of one ClusterQueue
// (Kueue's UsageBasedAdmissionFairSharing): in a queue that enables it,
// the next workload tried comes from the LocalQueue whose usage — decayed
// with fairSharing.usage's half-life when that is on, current otherwise —
// weighted per resource and divided by the LocalQueue's weight, is the
// lowest. As in Kueue the usage is summed over resources (and here over
// flavors), not DRF's largest share: a LocalQueue has no quota of its own
// to divide by.

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/musterhq/muster/internal/core"
)

// lqDecayKey names a LocalQueue (namespace/name) in the decay maps.
func lqDecayKey(key string) string { return "lq/" + key }

// SetLocalQueueWeight sets a LocalQueue's admission fair-sharing weight
// in milli-units (1000 = 1); weight 0 puts it last.
func (c *Cache) SetLocalQueueWeight(key string, weight int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lqWeight[key] = weight
}

// DeleteLocalQueue forgets a LocalQueue's weight and decayed usage.
func (c *Cache) DeleteLocalQueue(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.lqWeight, key)
	if c.decay != nil {
		delete(c.decay.byNode, lqDecayKey(key))
		delete(c.decay.admittedLQ, key)
	}
}

// UsesAdmissionFairSharing reports whether the ClusterQueue orders its
// LocalQueues by their usage.
func (c *Cache) UsesAdmissionFairSharing(clusterQueue string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cq, ok := c.queues[clusterQueue]
	return ok && cq.AdmissionFairSharing
}

// LocalQueueDecayedUsage returns a LocalQueue's decayed usage (with what
// was admitted since the last sample), for its status.
func (c *Cache) LocalQueueDecayedUsage(key string) (DecayedUsage, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.decay == nil {
		return DecayedUsage{}, false
	}
	d, ok := c.decay.byNode[lqDecayKey(key)]
	return d.Add(c.decay.admittedLQ[key], c.decay.sampling, c.decay.cfg), ok
}

// RestoreLocalQueueDecayedUsage sets a LocalQueue's decayed usage as its
// status kept it, so that a restart continues it.
func (c *Cache) RestoreLocalQueueDecayedUsage(key string, d DecayedUsage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.decay == nil {
		return
	}
	if _, known := c.decay.byNode[lqDecayKey(key)]; !known {
		c.decay.byNode[lqDecayKey(key)] = d
	}
}

// LocalQueueShare is the LocalQueue's weighted usage in thousandths, what
// admission fair sharing orders by (lower first).
func (c *Cache) LocalQueueShare(key string) int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	score := c.lqScoreLocked(key)
	if score >= math.MaxInt64/1000 {
		return math.MaxInt64
	}
	return int64(math.Round(score * 1000))
}

// lqScoreLocked is the LocalQueue's weighted usage. The caller holds the
// lock.
func (c *Cache) lqScoreLocked(key string) float64 {
	cfg := DecayConfig{}
	var amounts map[core.FlavorResource]float64
	if c.decay != nil {
		cfg = c.decay.cfg
		amounts = c.decay.byNode[lqDecayKey(key)].Add(c.decay.admittedLQ[key], c.decay.sampling, cfg).Usage
	} else {
		amounts = map[core.FlavorResource]float64{}
		for fr, v := range c.lqUsage[key] {
			amounts[fr] = float64(v)
		}
	}
	return weightedScore(amounts, c.localQueueWeight(key), cfg)
}

func compareFlavorResource(a, b core.FlavorResource) int {
	return cmp.Or(cmp.Compare(a.Flavor, b.Flavor), cmp.Compare(a.Resource, b.Resource))
}

func (c *Cache) localQueueWeight(key string) int64 {
	if w, ok := c.lqWeight[key]; ok {
		return w
	}
	return 1000
}

// weightedScore sums the weighted amounts (CPU in cores, not milli-cores)
// and divides by the weight; weight 0 is last.
func weightedScore(amounts map[core.FlavorResource]float64, weight int64, cfg DecayConfig) float64 {
	var sum float64
	// In a fixed order: a float sum depends on it, and ties between
	// LocalQueues must not be decided by rounding.
	for _, fr := range slices.SortedFunc(maps.Keys(amounts), compareFlavorResource) {
		v := amounts[fr]
		if core.MilliUnits(fr.Resource) {
			v /= 1000
		}
		sum += v * cfg.weight(fr.Resource)
	}
	if weight <= 0 {
		return math.Inf(1)
	}
	return sum * 1000 / float64(weight)
}

// countLocalQueue adds an admission to its LocalQueue's usage: the cache's
// current usage, and the decay's since-the-last-sample sum. The caller
// holds the lock.
func (c *Cache) countLocalQueue(wl *core.Workload, u core.Usage, sign int64) {
	key := core.LocalQueueKey(wl)
	cur := c.lqUsage[key]
	if cur == nil {
		cur = core.Usage{}
		c.lqUsage[key] = cur
	}
	for fr, v := range u {
		cur[fr] += sign * v
		if cur[fr] == 0 {
			delete(cur, fr)
		}
	}
	if len(cur) == 0 {
		delete(c.lqUsage, key)
	}
}

// recordAdmittedLQ counts a new admission toward its LocalQueue's decayed
// usage until the next sample. The caller holds the lock.
func (c *Cache) recordAdmittedLQ(wl *core.Workload, u core.Usage) {
	if c.decay == nil {
		return
	}
	key := core.LocalQueueKey(wl)
	sum := c.decay.admittedLQ[key]
	if sum == nil {
		sum = core.Usage{}
		c.decay.admittedLQ[key] = sum
	}
	sum.Add(u)
}

// sampleLocalQueues folds every LocalQueue's current usage into its
// decayed usage. The caller holds the lock.
func (c *Cache) sampleLocalQueues(now time.Time, next map[string]DecayedUsage) {
	seen := map[string]bool{}
	for key, u := range c.lqUsage {
		k := lqDecayKey(key)
		next[k] = c.decay.byNode[k].Sample(u, now, c.decay.cfg)
		seen[k] = true
	}
	for k, d := range c.decay.byNode {
		if len(k) > 3 && k[:3] == "lq/" && !seen[k] {
			next[k] = d.Sample(nil, now, c.decay.cfg)
		}
	}
	c.decay.admittedLQ = map[string]core.Usage{}
}

// snapshotLocalQueues gives a snapshot the LocalQueue scores of the
// queues that use admission fair sharing. The caller holds the lock.
func (c *Cache) snapshotLocalQueues(s *Snapshot) {
	used := false
	for _, q := range s.Queues {
		used = used || q.AdmissionFairSharing
	}
	if !used {
		return
	}
	s.lqScores = map[string]float64{}
	s.lqWeights = maps.Clone(c.lqWeight)
	keys := map[string]bool{}
	for k := range c.lqUsage {
		keys[k] = true
	}
	if c.decay != nil {
		for k := range c.decay.byNode {
			if len(k) > 3 && k[:3] == "lq/" {
				keys[k[3:]] = true
			}
		}
		s.lqDecay = c.decay
	}
	for k := range keys {
		s.lqScores[k] = c.lqScoreLocked(k)
	}
}

// LocalQueueScore is a LocalQueue's score in the cycle: unused LocalQueues score
// 0, but one of weight 0 always comes last, used or not (as its status and
// the visibility API say).
func (s *Snapshot) LocalQueueScore(key string) float64 {
	if v, ok := s.lqScores[key]; ok {
		return v
	}
	if w, ok := s.lqWeights[key]; ok && w <= 0 {
		return math.Inf(1)
	}
	return 0
}

// CountLocalQueueAdmission raises the score of the admitted workload's
// LocalQueue, so the cycle's next pick in its queue sees it: by the whole
// usage, or, with decay, by what the next sample will count of it.
func (s *Snapshot) CountLocalQueueAdmission(q *QueueSnapshot, wl *core.Workload, u core.Usage) {
	if !q.AdmissionFairSharing || s.lqScores == nil {
		return
	}
	key := core.LocalQueueKey(wl)
	amounts := map[core.FlavorResource]float64{}
	cfg := DecayConfig{}
	scale := 1.0
	if s.lqDecay != nil {
		cfg = s.lqDecay.cfg
		scale = cfg.alpha(s.lqDecay.sampling)
	}
	for fr, v := range u {
		amounts[fr] = float64(v) * scale
	}
	weight := int64(1000)
	if w, ok := s.lqWeights[key]; ok {
		weight = w
	}
	s.lqScores[key] += weightedScore(amounts, weight, cfg)
}

// LocalQueueScores is what taking a ClusterQueue's LocalQueues in turns
// by admission fair sharing needs, copied from the cache: each
// LocalQueue's score (weighted usage), raised by Take for each workload
// taken as if it were admitted.
type LocalQueueScores struct {
	scores  map[string]float64
	weights map[string]int64
	cfg     DecayConfig
	scale   float64
}

// AdmissionScores are the scores of localQueues (namespace/name keys),
// pending in the ClusterQueue; false when the queue does not use admission
// fair sharing (its pending order is priority and age alone).
func (c *Cache) AdmissionScores(clusterQueue string, localQueues []string) (*LocalQueueScores, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cq, ok := c.queues[clusterQueue]
	if !ok || !cq.AdmissionFairSharing {
		return nil, false
	}
	s := &LocalQueueScores{scores: make(map[string]float64, len(localQueues)), weights: make(map[string]int64, len(localQueues)), scale: 1}
	for _, k := range localQueues {
		s.scores[k], s.weights[k] = c.lqScoreLocked(k), c.localQueueWeight(k)
	}
	if c.decay != nil {
		s.cfg, s.scale = c.decay.cfg, c.decay.cfg.alpha(c.decay.sampling)
	}
	return s, true
}

// Clone copies the scores, so that taking turns leaves these as they were.
func (s *LocalQueueScores) Clone() *LocalQueueScores {
	c := *s
	c.scores, c.weights = maps.Clone(s.scores), maps.Clone(s.weights)
	return &c
}

// Equal reports whether two sets of scores order the same LocalQueues
// alike: the same scores, weights and decay.
func (s *LocalQueueScores) Equal(o *LocalQueueScores) bool {
	return s.scale == o.scale && s.cfg.HalfLife == o.cfg.HalfLife && maps.Equal(s.cfg.Weights, o.cfg.Weights) &&
		maps.Equal(s.scores, o.scores) && maps.Equal(s.weights, o.weights)
}

// Score is a LocalQueue's score.
func (s *LocalQueueScores) Score(localQueue string) float64 { return s.scores[localQueue] }

// Take raises the score of wl's LocalQueue (k, its key) by what wl asks. It is called
// once per pending workload for an order of 100,000, so it sums as
// weightedScore does (the same additions in the same order, since ties
// between LocalQueues must come out alike) without a map per workload.
func (s *LocalQueueScores) Take(k string, wl *core.Workload) {
	var buf [8]resourceAmount
	amounts := buf[:0]
	for _, ps := range wl.PodSets {
		for res, v := range ps.Requests {
			amounts = addAmount(amounts, res, float64(v)*float64(ps.Count)*s.scale)
		}
	}
	var sum float64
	for _, a := range amounts {
		v := a.amount
		if core.MilliUnits(a.resource) {
			v /= 1000
		}
		sum += v * s.cfg.weight(a.resource)
	}
	if w := s.weights[k]; w > 0 {
		s.scores[k] += sum * 1000 / float64(w)
	} else {
		s.scores[k] += math.Inf(1)
	}
}

// resourceAmount is one resource's requested amount, for Take.
type resourceAmount struct {
	resource string
	amount   float64
}

// addAmount adds v to resource's amount, keeping amounts sorted by
// resource (the order weightedScore sums in: no flavor, so by resource).
func addAmount(amounts []resourceAmount, resource string, v float64) []resourceAmount {
	i, found := slices.BinarySearchFunc(amounts, resource, func(a resourceAmount, r string) int { return cmp.Compare(a.resource, r) })
	if found {
		amounts[i].amount += v
		return amounts
	}
	return slices.Insert(amounts, i, resourceAmount{resource: resource, amount: v})
}
