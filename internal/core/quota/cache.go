package quota

import (
	"reflect"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/core"
)

// Cache is the scheduler's view of quota: flavors, ClusterQueues and the
// workloads that hold quota, admitted or assumed. It is safe for concurrent
// use. Workloads are kept whatever order their queue and flavors arrive in,
// so a restart that replays objects in any order rebuilds the same usage.
type Cache struct {
	mu        sync.RWMutex
	flavors   map[string]*core.Flavor
	queues    map[string]*core.ClusterQueue
	cohorts   map[string]*core.Cohort
	workloads map[string]*cachedWorkload
	// byQueue indexes the workloads by ClusterQueue name.
	byQueue map[string]map[string]*cachedWorkload
	// usage is per ClusterQueue name, also for queues not (yet) in the cache.
	usage map[string]core.Usage
	// lqStop holds the stop policy of stopped LocalQueues (namespace/name).
	lqStop map[string]core.StopPolicy
	// decay, when set, is usage-decayed fair sharing (SetUsageDecay).
	decay *usageDecay
	// lqUsage is what each LocalQueue's (namespace/name) admitted
	// workloads hold, and lqWeight the admission fair-sharing weight of
	// those that set one (lqfair.go).
	lqUsage  map[string]core.Usage
	lqWeight map[string]int64
	// classMinRuntime is the minimum runtime of WorkloadPriorityClasses
	// that set one.
	classMinRuntime map[string]time.Duration
	// capacity is the nodes, pods and topologies of topology placement.
	capacity *capacity
	// gangMissing names the gang schedulers whose API is not served, with
	// what is missing.
	gangMissing map[string]string
	// checks are the AdmissionChecks, by name.
	checks map[string]Check
	// unplaced are the workloads holding quota whose checks are Ready and
	// whose delayed pod sets wait to be placed.
	unplaced map[string]bool
}

type cachedWorkload struct {
	wl      *core.Workload
	usage   core.Usage
	assumed bool
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{
		flavors:   map[string]*core.Flavor{},
		queues:    map[string]*core.ClusterQueue{},
		cohorts:   map[string]*core.Cohort{},
		workloads: map[string]*cachedWorkload{},
		byQueue:   map[string]map[string]*cachedWorkload{},
		usage:     map[string]core.Usage{},
		lqStop:    map[string]core.StopPolicy{},
		capacity:  newCapacity(),

		classMinRuntime: map[string]time.Duration{},
		lqUsage:         map[string]core.Usage{},
		lqWeight:        map[string]int64{},

		gangMissing: map[string]string{},
		checks:      map[string]Check{},
		unplaced:    map[string]bool{},
	}
}

// SetPriorityClassMinRuntime sets how long the workloads of a
// WorkloadPriorityClass run before they may be preempted; zero (or a
// deleted class) protects them no longer.
func (c *Cache) SetPriorityClassMinRuntime(class string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d <= 0 {
		delete(c.classMinRuntime, class)
		return
	}
	c.classMinRuntime[class] = d
}

// SetLocalQueueStop records a LocalQueue's stop policy.
func (c *Cache) SetLocalQueueStop(key string, p core.StopPolicy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p == core.Running {
		delete(c.lqStop, key)
	} else {
		c.lqStop[key] = p
	}
}

// UpsertFlavor adds or replaces a flavor. It reports whether the flavor is
// new or changed: the queues using it need another look only then.
func (c *Cache) UpsertFlavor(f *core.Flavor) (changed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.flavors[f.Name]
	c.flavors[f.Name] = f
	return !ok || !reflect.DeepEqual(old, f)
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
		if slices.Contains(cq.FlavorNames(), flavor) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// UpsertClusterQueue adds or replaces a ClusterQueue.
func (c *Cache) UpsertClusterQueue(cq *core.ClusterQueue) {
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

// HasClusterQueue reports whether a ClusterQueue is in the cache.
func (c *Cache) HasClusterQueue(name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.queues[name]
	return ok
}
