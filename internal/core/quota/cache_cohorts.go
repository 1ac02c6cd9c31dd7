package quota

import (
	"sort"

	"github.com/musterhq/muster/internal/core"
)

// UpsertCohort adds or replaces a Cohort object's quota, parent and weight.
func (c *Cache) UpsertCohort(co *core.Cohort) {
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
	c.mu.RLock()
	defer c.mu.RUnlock()
	// The quota of the cohort's tree alone: a whole Snapshot would copy
	// every workload and the nodes' capacity for one number.
	n, ok := c.quotaSnapshot(c.queuesOfTree(c.rootOf(cohort))).Cohorts[cohort]
	if !ok {
		return 0, false
	}
	return n.Share(), true
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
