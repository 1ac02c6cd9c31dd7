package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// NoFit explains why a workload does not fit a ClusterQueue: for the first
// pod set that failed, why each flavor was rejected.
type NoFit struct {
	PodSet  string
	Reasons []Reason
	// Never is true when the workload cannot fit even in an empty queue, so
	// waiting will not help (a resource not covered, a request above quota).
	Never bool
	// Totals is what the whole workload requests of the resources short,
	// when it has several pod sets.
	Totals Requests
	// PlacementOnly is true when the quota holds the workload and only
	// its placement on the nodes failed: preemption may free nodes, but
	// holding quota room for it would not.
	PlacementOnly bool
	// Shortfall says how many pods would fit, when fewer than asked would
	// (or when not even a shrinkable pod set's minimum does).
	Shortfall *Shortfall
}

// Reason is why one flavor was rejected. It is formatted only when a
// message is needed: most rejected flavors belong to workloads that fit on
// a later one.
type Reason struct {
	// Text is a reason already in words (flavor missing, placement).
	Text string
	// Otherwise, the shortfall of a resource in a flavor.
	Resource, Flavor       string
	Need, Available, Quota int64
	Never                  bool
}

func (r Reason) String() string {
	if r.Text != "" {
		return r.Text
	}
	s := fmt.Sprintf("insufficient quota for %s in flavor %s: %s requested, %s available (quota %s)",
		r.Resource, r.Flavor, Format(r.Resource, r.Need), Format(r.Resource, r.Available), Format(r.Resource, r.Quota))
	if r.Never {
		s += ", more than the queue can ever use"
	}
	return s
}

// Message is the text users read in the workload's QuotaReserved condition.
func (n *NoFit) Message() string {
	parts := make([]string, len(n.Reasons))
	for i, r := range n.Reasons {
		parts[i] = r.String()
	}
	msg := fmt.Sprintf("couldn't assign flavors to pod set %s: %s", n.PodSet, strings.Join(parts, "; "))
	if len(n.Totals) > 0 {
		var totals []string
		for _, res := range slices.Sorted(maps.Keys(n.Totals)) {
			totals = append(totals, Format(res, n.Totals[res])+" "+res)
		}
		msg += "; the whole workload needs " + strings.Join(totals, ", ")
	}
	return msg + describeShortfall(n.Shortfall)
}

// Shortfall is what a NoFit says of a smaller count: how many pods of the
// pod set would fit now, of how many asked, and the fewest the job allows
// (Asked when it allows no fewer).
type Shortfall struct {
	PodSet           string
	Fits, Asked, Min int32
}

// String is the sentence the pending reason ends with.
func (s Shortfall) String() string {
	if s.Fits == 0 {
		if s.Min < s.Asked {
			return fmt.Sprintf("not even the %d pods pod set %s may start with fit", s.Min, s.PodSet)
		}
		return ""
	}
	if s.Min < s.Asked {
		return fmt.Sprintf("%d of the %d pods of pod set %s would fit, fewer than the %d it may start with", s.Fits, s.Asked, s.PodSet, s.Min)
	}
	return fmt.Sprintf("%d of the %d pods of pod set %s would fit now, but the job may not start with fewer than all "+
		"(the job-min-parallelism annotation allows partial admission)", s.Fits, s.Asked, s.PodSet)
}

// describeShortfall is the hint appended to a NoFit message.
func describeShortfall(sf *Shortfall) string {
	if sf == nil {
		return ""
	}
	return "; " + strings.TrimSpace(sf.String())
}
