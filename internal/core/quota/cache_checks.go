package quota

import (
	"fmt"
	"slices"
	"strings"

	"github.com/musterhq/muster/internal/core"
)

// Check is what the cache knows of an AdmissionCheck.
type Check struct {
	// Active: its controller answers it. Message says why not.
	Active  bool
	Message string
	// DelaysPlacement: the check provisions the nodes of the flavors it
	// applies to, so their pod sets are placed only once it is Ready.
	DelaysPlacement bool
}

// SetCheck records an AdmissionCheck and returns the queues that name it,
// whose status may change.
func (c *Cache) SetCheck(name string, check Check) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checks[name] = check
	return c.queuesWithCheck(name)
}

// DeleteCheck forgets a deleted AdmissionCheck and returns the queues that
// name it.
func (c *Cache) DeleteCheck(name string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.checks, name)
	return c.queuesWithCheck(name)
}

func (c *Cache) queuesWithCheck(name string) []string {
	var out []string
	for qn, q := range c.queues {
		if slices.ContainsFunc(q.Checks, func(r core.CheckRule) bool { return r.Name == name }) {
			out = append(out, qn)
		}
	}
	slices.Sort(out)
	return out
}

// checksInactive says why the queue's checks keep it from admitting: one
// missing, or one not Active.
func (c *Cache) checksInactive(cq *core.ClusterQueue) (Inactivity, string) {
	var missing, inactive []string
	for _, r := range cq.Checks {
		ch, ok := c.checks[r.Name]
		switch {
		case !ok:
			missing = append(missing, r.Name)
		case !ch.Active:
			inactive = append(inactive, fmt.Sprintf("%s (%s)", r.Name, ch.Message))
		}
	}
	if len(missing) > 0 {
		return CheckMissing, fmt.Sprintf("AdmissionCheck %s not found", strings.Join(missing, ", "))
	}
	if len(inactive) > 0 {
		return CheckInactive, fmt.Sprintf("AdmissionCheck %s is not active", strings.Join(inactive, ", "))
	}
	return Active, ""
}

// delayingChecks are the checks that delay placement, for the snapshot.
func (c *Cache) delayingChecks() map[string]bool {
	out := map[string]bool{}
	for name, ch := range c.checks {
		if ch.DelaysPlacement {
			out[name] = true
		}
	}
	return out
}

// ChecksFor names the admission checks an admission into its queue must
// pass, in the queue's order.
func (c *Cache) ChecksFor(adm *core.Admission) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if q := c.queues[adm.ClusterQueue]; q != nil {
		return q.ChecksFor(adm)
	}
	return nil
}
