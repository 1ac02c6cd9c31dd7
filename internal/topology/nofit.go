package topology

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// NoFit says why a pod set does not fit, in terms a pending reason can use:
// the shape asked for and the best domain on offer.
type NoFit struct {
	PodSet string
	Mode   Mode
	// Level is the label key the pods had to share (empty when
	// Unconstrained); SliceLevel and SliceSize as in the PodSet.
	Level      string
	SliceLevel string
	SliceSize  int32
	Count      int32
	// Need is the whole pod set's request.
	Need Resources
	// Best is the domain at Level holding the most of the pod set, or the
	// whole topology for Unconstrained and Preferred; nil when no node
	// qualifies.
	Best *DomainFree
	// Group names the pod sets that had to share one domain, when the
	// pod set was placed as part of a group.
	Group []string
	// Closest is the node the pod set may use with the most free of its
	// first requested resource, when the pods did not fit anywhere (not
	// Required): the node that comes closest to holding one more pod.
	Closest *DomainFree
	// Nodes says the topology is the implicit one of a flavor's nodes, to
	// word the reason about nodes rather than a topology.
	Nodes bool
}

// DomainFree is what one domain offers a pod set: how many of its pods fit
// and the free amounts of the requested resources on the nodes it may use.
type DomainFree struct {
	Values []string
	Pods   int64
	Free   Resources
}

func (e *NoFit) Error() string { return e.Describe(nil) }

// Describe says why in words, with amounts rendered by format (the raw
// amounts when nil): the caller knows the units, e.g. cpu in milli-cores.
func (e *NoFit) Describe(format func(res string, amount int64) string) string {
	if format == nil {
		format = func(_ string, v int64) string { return fmt.Sprint(v) }
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pod set %s needs %s (%d pods", e.PodSet, formatResources(e.Need, format), e.Count)
	if e.SliceSize > 1 {
		fmt.Fprintf(&b, " in slices of %d per %s", e.SliceSize, e.SliceLevel)
	}
	b.WriteString(")")
	scope := "the topology"
	if e.Nodes {
		scope = "its nodes"
	}
	where := scope
	switch e.Mode {
	case Required:
		fmt.Fprintf(&b, " in one %s", e.Level)
		where = e.Level
	case Preferred:
		b.WriteString(" anywhere in " + scope)
	}
	if others := e.others(); len(others) > 0 {
		fmt.Fprintf(&b, " together with %s", strings.Join(others, ", "))
	}
	if e.Best == nil && len(e.Group) > 1 {
		fmt.Fprintf(&b, "; each fits some %s alone, none fits there together", where)
		return b.String()
	}
	if e.Best == nil && e.Nodes {
		// A flavor checked on its nodes that has none (a nodeLabels typo,
		// nodes not labelled yet, or nodes that come with the job).
		b.WriteString("; none of the flavor's nodes qualifies (Ready, matching its nodeLabels, its taints tolerated, the pod set's selectors): " +
			"label the nodes, or set the flavor's nodeFit to None if its nodes arrive with the job")
		return b.String()
	}
	if e.Best == nil {
		b.WriteString("; no node qualifies")
		return b.String()
	}
	switch {
	case len(e.Best.Values) > 0:
		fmt.Fprintf(&b, "; best %s %s holds %d pods, has %s free", where, e.Best.Values[len(e.Best.Values)-1], e.Best.Pods, formatResources(e.Best.Free, format))
	case e.Nodes:
		fmt.Fprintf(&b, "; its nodes hold %d pods, have %s free in all", e.Best.Pods, formatResources(e.Best.Free, format))
	default:
		fmt.Fprintf(&b, "; %s holds %d pods, has %s free", where, e.Best.Pods, formatResources(e.Best.Free, format))
	}
	if c := e.Closest; c != nil && len(c.Values) > 0 {
		fmt.Fprintf(&b, "; closest node %s has %s free", c.Values[len(c.Values)-1], formatResources(c.Free, format))
	}
	return b.String()
}

// others are the group's other pod sets.
func (e *NoFit) others() []string {
	var o []string
	for _, n := range e.Group {
		if n != e.PodSet {
			o = append(o, n)
		}
	}
	return o
}

func formatResources(r Resources, format func(string, int64) string) string {
	parts := make([]string, 0, len(r))
	for _, name := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, format(name, r[name])+" "+name)
	}
	return strings.Join(parts, ", ")
}

// noFit describes the failure of the fitter's plan on the whole topology.
func (f *fitter) noFit() *NoFit {
	p := f.p
	if p.ps.Mode == Required {
		return f.noFitAt(p.level)
	}
	e := &NoFit{
		PodSet: p.ps.Name, Mode: p.ps.Mode, Count: p.ps.Count,
		SliceLevel: p.ps.SliceLevel, SliceSize: p.ps.SliceSize, Need: need(p.ps),
	}
	if p.ps.Mode == Preferred {
		e.Level = p.ps.Level
	}
	if len(f.y.names) > 0 {
		e.Best = f.domainFree(-1, 0)
		e.Closest = f.closestNode()
	}
	return e
}

// closestNode is the allowed node with the most free of the pod set's
// first requested resource; nil when none is allowed.
func (f *fitter) closestNode() *DomainFree {
	best := -1
	var most int64
	for i := range f.y.names {
		if !f.allowed(i) {
			continue
		}
		var free int64
		if len(f.p.req) > 0 && f.p.req[0].res >= 0 {
			free = f.s.free[i*f.s.nres+f.p.req[0].res]
		}
		if best < 0 || free > most {
			best, most = i, free
		}
	}
	if best < 0 {
		return nil
	}
	d := &DomainFree{Values: []string{f.y.names[best]}, Free: Resources{}, Pods: f.pods[best+1] - f.pods[best]}
	for k, name := range f.p.names {
		if q := f.p.req[k]; q.res >= 0 {
			d.Free[name] = f.s.free[best*f.s.nres+q.res]
		}
	}
	return d
}

// noFitAt describes the failure to hold the plan in one domain of level l.
func (f *fitter) noFitAt(l int) *NoFit {
	p := f.p
	e := &NoFit{
		PodSet: p.ps.Name, Mode: Required, Level: f.y.levels[l], Count: p.ps.Count,
		SliceLevel: p.ps.SliceLevel, SliceSize: p.ps.SliceSize, Need: need(p.ps),
	}
	if _, best := f.tightest(l, 0, f.y.count(l)); best >= 0 {
		e.Best = f.bestDomain(l, best)
	}
	return e
}

// bestDomain is the domain to name in a NoFit: the one holding the most
// pods, and when none holds any, the one with the most free of the first
// requested resource on nodes the pod set may use, so that a domain the
// pod set cannot use at all is never named.
func (f *fitter) bestDomain(l, best int) *DomainFree {
	d := f.domainFree(l, best)
	if d.Pods > 0 || len(f.p.names) == 0 {
		return d
	}
	first := f.p.names[0]
	for j := range f.y.count(l) {
		if c := f.domainFree(l, j); c.Free[first] > d.Free[first] {
			d = c
		}
	}
	return d
}

// domainFree sums what domain j at level l (-1: everything) offers.
func (f *fitter) domainFree(l, j int) *DomainFree {
	lo, hi := 0, len(f.y.names)
	d := &DomainFree{Free: Resources{}}
	if l >= 0 {
		lo, hi = f.y.nodes(l, j)
		d.Values = f.y.path(l, j)
	}
	d.Pods = f.pods[hi] - f.pods[lo]
	if p := f.p; p.slice < f.y.nodeLevel() {
		d.Pods = f.slicePods(lo, hi)
	}
	sums := make([]int64, len(f.p.req))
	for i := lo; i < hi; i++ {
		if !f.allowed(i) {
			continue
		}
		for k, q := range f.p.req {
			if q.res >= 0 {
				sums[k] += f.s.free[i*f.s.nres+q.res]
			}
		}
	}
	for k, name := range f.p.names {
		d.Free[name] = sums[k]
	}
	return d
}

// slicePods counts the pods in whole slices among the nodes [lo, hi).
func (f *fitter) slicePods(lo, hi int) int64 {
	var n int64
	ls := f.p.slice
	for d := f.y.leafAt(ls, lo); d < f.y.count(ls); d++ {
		dlo, dhi := f.y.nodes(ls, d)
		if dlo >= hi {
			break
		}
		n += (f.pods[dhi] - f.pods[dlo]) / f.p.size * f.p.size
	}
	return n
}

// need is the whole pod set's request.
func need(ps *PodSet) Resources {
	r := make(Resources, len(ps.Request))
	for name, v := range ps.Request {
		r[name] = v * int64(ps.Count)
	}
	return r
}
