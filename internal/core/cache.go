package core

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Cache is the scheduler's view of quota: flavors, ClusterQueues and the
// workloads that hold quota, admitted or assumed. It is safe for concurrent
// use. Workloads are kept whatever order their queue and flavors arrive in,
// so a restart that replays objects in any order rebuilds the same usage.
type Cache struct {
	mu        sync.RWMutex
	flavors   map[string]*Flavor
	queues    map[string]*ClusterQueue
	cohorts   map[string]*Cohort
	workloads map[string]*cachedWorkload
	// byQueue indexes the workloads by ClusterQueue name.
	byQueue map[string]map[string]*cachedWorkload
	// usage is per ClusterQueue name, also for queues not (yet) in the cache.
	usage map[string]Usage
	// lqStop holds the stop policy of stopped LocalQueues (namespace/name).
	lqStop      map[string]StopPolicy
	fairSharing bool
	// blockAdmission admits nothing while an admitted workload's pods are
	// not all ready (waitForPodsReady.blockAdmission).
	blockAdmission bool
	// preemptionDelay is how long a workload that fits only by preempting
	// holds its room, waiting for it to free, before it evicts anyone.
	preemptionDelay time.Duration
}

type cachedWorkload struct {
	wl      *Workload
	usage   Usage
	assumed bool
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{
		flavors:   map[string]*Flavor{},
		queues:    map[string]*ClusterQueue{},
		cohorts:   map[string]*Cohort{},
		workloads: map[string]*cachedWorkload{},
		byQueue:   map[string]map[string]*cachedWorkload{},
		usage:     map[string]Usage{},
		lqStop:    map[string]StopPolicy{},
	}
}

// SetFairSharing turns DRF fair sharing on or off.
func (c *Cache) SetFairSharing(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fairSharing = on
}

// SetPreemptionDelay sets how long a workload that fits only by preempting
// waits, holding its room, before it evicts anyone.
func (c *Cache) SetPreemptionDelay(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.preemptionDelay = d
}

// SetBlockAdmission turns waitForPodsReady's blockAdmission on or off.
func (c *Cache) SetBlockAdmission(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blockAdmission = on
}

// UpsertCohort adds or replaces a Cohort object's quota, parent and weight.
func (c *Cache) UpsertCohort(co *Cohort) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cohorts[co.Name] = co
}

// DeleteCohort removes a Cohort object; the cohort lives on, without quota
// of its own, as long as queues name it.
func (c *Cache) DeleteCohort(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.cohorts, name)
}

// SetLocalQueueStop records a LocalQueue's stop policy.
func (c *Cache) SetLocalQueueStop(key string, p StopPolicy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p == Running {
		delete(c.lqStop, key)
	} else {
		c.lqStop[key] = p
	}
}

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

// The tree queries below walk the cohorts' parent links in the cache
// instead of building a snapshot: they run on every release of quota.

// CohortTreeQueues lists the ClusterQueues of the cohort tree that holds a
// cohort.
func (c *Cache) CohortTreeQueues(cohort string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.treeQueues(c.rootOf(cohort))
}

// CohortShare returns a cohort's DRF share within its parent, in
// thousandths divided by its weight, and whether the cohort exists.
func (c *Cache) CohortShare(cohort string) (int64, bool) {
	n, ok := c.Snapshot().cohorts[cohort]
	if !ok {
		return 0, false
	}
	return n.share(), true
}

// AncestorCohorts lists the cohorts above a ClusterQueue, nearest first.
func (c *Cache) AncestorCohorts(clusterQueue string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cq, ok := c.queues[clusterQueue]
	if !ok || cq.Cohort == "" {
		return nil
	}
	return c.ancestors(cq.Cohort)
}

// CohortQueues lists the ClusterQueues that share quota with the named one
// (its whole cohort tree), itself included.
func (c *Cache) CohortQueues(name string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cq, ok := c.queues[name]
	if !ok || cq.Cohort == "" {
		return []string{name}
	}
	return c.treeQueues(c.rootOf(cq.Cohort))
}

// ancestors is a cohort and its parents, nearest first, stopping at a
// cycle.
func (c *Cache) ancestors(cohort string) []string {
	seen := map[string]bool{}
	var out []string
	for name := cohort; name != "" && !seen[name]; {
		seen[name] = true
		out = append(out, name)
		co, ok := c.cohorts[name]
		if !ok {
			break
		}
		name = co.Parent
	}
	return out
}

func (c *Cache) rootOf(cohort string) string {
	a := c.ancestors(cohort)
	return a[len(a)-1]
}

// treeQueues lists, sorted, the ClusterQueues whose cohort tree has root.
func (c *Cache) treeQueues(root string) []string {
	var out []string
	for name, cq := range c.queues {
		if cq.Cohort != "" && c.rootOf(cq.Cohort) == root {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// UpsertFlavor adds or replaces a flavor.
func (c *Cache) UpsertFlavor(f *Flavor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flavors[f.Name] = f
}

// DeleteFlavor removes a flavor; queues using it become inactive.
func (c *Cache) DeleteFlavor(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.flavors, name)
}

// FlavorInUse reports whether an admitted workload holds quota of a flavor.
func (c *Cache) FlavorInUse(flavor string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, u := range c.usage {
		for fr, v := range u {
			if fr.Flavor == flavor && v > 0 {
				return true
			}
		}
	}
	return false
}

// QueuesUsingFlavor lists the ClusterQueues that refer to a flavor.
func (c *Cache) QueuesUsingFlavor(flavor string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var names []string
	for name, cq := range c.queues {
		if slices.Contains(cq.flavorNames(), flavor) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// UpsertClusterQueue adds or replaces a ClusterQueue.
func (c *Cache) UpsertClusterQueue(cq *ClusterQueue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queues[cq.Name] = cq
}

// DeleteClusterQueue removes a ClusterQueue. Its workloads keep their usage
// recorded until they finish, in case the queue comes back.
func (c *Cache) DeleteClusterQueue(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.queues, name)
}

// Assume records the admission the scheduler just decided, before the
// API write confirms it, so the next cycle already sees the quota taken.
func (c *Cache) Assume(wl *Workload) error {
	if wl.Admission == nil {
		return fmt.Errorf("workload %s has no admission to assume", wl.Key)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.workloads[wl.Key]; ok {
		return fmt.Errorf("workload %s already holds quota", wl.Key)
	}
	c.add(wl, true)
	return nil
}

// Forget undoes Assume after a failed write. A workload the API has
// confirmed in the meantime is kept.
func (c *Cache) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cw, ok := c.workloads[key]; ok && cw.assumed {
		c.remove(key)
	}
}

// AddOrUpdateWorkload records a workload the API shows holding quota. It
// reports whether the workload's pods just became ready, which may unblock
// admission.
func (c *Cache) AddOrUpdateWorkload(wl *Workload) (becameReady bool) {
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

// HasClusterQueue reports whether a ClusterQueue is in the cache.
func (c *Cache) HasClusterQueue(name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.queues[name]
	return ok
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

func (c *Cache) add(wl *Workload, assumed bool) {
	u := wl.Admission.Usage()
	cw := &cachedWorkload{wl: wl, usage: u, assumed: assumed}
	c.workloads[wl.Key] = cw
	cq := wl.Admission.ClusterQueue
	if c.usage[cq] == nil {
		c.usage[cq] = Usage{}
		c.byQueue[cq] = map[string]*cachedWorkload{}
	}
	c.usage[cq].Add(u)
	c.byQueue[cq][wl.Key] = cw
}

func (c *Cache) remove(key string) {
	cw, ok := c.workloads[key]
	if !ok {
		return
	}
	delete(c.workloads, key)
	cq := cw.wl.Admission.ClusterQueue
	c.usage[cq].Sub(cw.usage)
	delete(c.byQueue[cq], key)
	if len(c.byQueue[cq]) == 0 {
		delete(c.usage, cq)
		delete(c.byQueue, cq)
	}
}

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

// Snapshot copies what one scheduling cycle needs, so the cycle decides
// without holding the lock while events keep arriving.
func (c *Cache) Snapshot() *Snapshot {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := &Snapshot{
		queues:      make(map[string]*QueueSnapshot, len(c.queues)),
		cohorts:     map[string]*node{},
		flavors:     make(map[string]*Flavor, len(c.flavors)),
		lqStop:      make(map[string]StopPolicy, len(c.lqStop)),
		fairSharing: c.fairSharing,

		preemptionDelay: c.preemptionDelay,
	}
	if c.blockAdmission {
		s.notReady = c.notReady()
	}
	for name, f := range c.flavors {
		s.flavors[name] = f
	}
	for k, v := range c.lqStop {
		s.lqStop[k] = v
	}
	for name, cq := range c.queues {
		leaf := newNode(name, cq.ResourceGroups, cq.Weight)
		q := &QueueSnapshot{ClusterQueue: cq, node: leaf, Workloads: map[string]*Workload{}, Inactive: c.inactiveReason(cq)}
		leaf.queue = q
		s.queues[name] = q
		if cq.Cohort != "" {
			attach(leaf, c.cohortNode(s, cq.Cohort))
		}
	}
	for name := range c.cohorts {
		c.cohortNode(s, name)
	}
	cycles := c.linkCohorts(s)
	for _, n := range s.cohorts {
		if n.parent == nil {
			n.computeSubtree()
		}
	}
	for _, q := range s.queues {
		if q.node.parent == nil {
			q.node.computeSubtree()
		}
		if q.Inactive == "" && q.Cohort != "" && cycles[q.node.root().name] {
			q.Inactive = "cohort " + q.Cohort + " is part of a cycle of parents"
		}
	}
	for name, q := range s.queues {
		q.AddUsage(c.usage[name])
	}
	c.copyWorkloads(s)
	return s
}

// copyWorkloads gives the snapshot the admitted workloads of the queues
// whose cycle may need them one by one: cohort trees where some queue may
// preempt, and draining queues. Elsewhere the per-queue totals suffice, so
// a cycle's cost does not grow with everything admitted.
func (c *Cache) copyWorkloads(s *Snapshot) {
	lqDrain := false
	for _, p := range s.lqStop {
		lqDrain = lqDrain || p == HoldAndDrain
	}
	needed := map[*node]bool{}
	for _, q := range s.queues {
		if q.Preemption != (Preemption{}) || q.Stop == HoldAndDrain || lqDrain {
			needed[q.node.root()] = true
		}
	}
	for root := range needed {
		for _, q := range root.leaves() {
			for key, cw := range c.byQueue[q.Name] {
				q.Workloads[key] = cw.wl
			}
		}
	}
}

// notReady lists the admitted workloads whose pods are not all ready yet
// (evicting ones excluded: they are going away).
func (c *Cache) notReady() []string {
	var keys []string
	for key, cw := range c.workloads {
		if !cw.wl.PodsReady && !cw.wl.Evicting {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys
}

// cohortNode returns the snapshot's node of a cohort, creating it (with the
// Cohort object's quota, if there is one).
func (c *Cache) cohortNode(s *Snapshot, name string) *node {
	if n, ok := s.cohorts[name]; ok {
		return n
	}
	var n *node
	if co, ok := c.cohorts[name]; ok {
		n = newNode(name, co.ResourceGroups, co.Weight)
	} else {
		n = newNode(name, nil, 1000)
	}
	s.cohorts[name] = n
	return n
}

// linkCohorts attaches cohorts to their parents. A parent link that would
// close a cycle is cut; it returns the roots whose trees had one.
func (c *Cache) linkCohorts(s *Snapshot) map[string]bool {
	cycles := map[string]bool{}
	names := make([]string, 0, len(c.cohorts))
	for name := range c.cohorts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		co := c.cohorts[name]
		if co.Parent == "" {
			continue
		}
		child, parent := s.cohorts[name], c.cohortNode(s, co.Parent)
		if parent.root() == child {
			cycles[child.name] = true
			continue
		}
		attach(child, parent)
	}
	return cycles
}

func attach(child, parent *node) {
	child.parent = parent
	parent.children = append(parent.children, child)
}
