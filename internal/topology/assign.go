package topology

import (
	"cmp"
	"slices"
)

// Place finds where a pod set's pods would go in this snapshot, without
// taking the capacity: call Apply for that. The error is a *NoFit when the
// capacity is lacking, or wraps ErrInvalid when the pod set is malformed.
func (s *Snapshot) Place(ps *PodSet) (*Assignment, error) {
	p, err := s.compile(ps)
	if err != nil {
		return nil, err
	}
	f := s.fitter(p)
	f.compute(-1, 0)
	if ok := f.place(); !ok {
		return nil, f.noFit()
	}
	return f.assignment(), nil
}

// place chooses per the plan's mode over the whole topology and leaves the
// picks in the scratch; false when nothing holds the pod set.
func (f *fitter) place() bool {
	switch f.p.ps.Mode {
	case Required:
		return f.placeIn(f.p.level, true)
	case Preferred:
		if f.p.ps.Balanced && f.placeBalanced() {
			return true
		}
		return f.climb(f.p.level, true)
	default:
		return f.climb(f.lowest(), false)
	}
}

// climb tries one domain of level l, then of each coarser level, and
// finally spreads over the top-level domains.
func (f *fitter) climb(l int, compact bool) bool {
	for ; l >= 0; l-- {
		if f.placeIn(l, compact) {
			return true
		}
	}
	return f.placeSpread(compact)
}

// lowest is where an unconstrained set starts looking for one domain: the
// last level, or the slice level, whose domains count whole slices.
func (f *fitter) lowest() int {
	return min(f.p.slice, f.y.nodeLevel()-1)
}

// placeIn puts the plan in the tightest domain of level l that holds it,
// and spreads it inside over the fewest children (compact) or the least
// free first.
func (f *fitter) placeIn(l int, compact bool) bool {
	j, _ := f.tightest(l, 0, f.y.count(l))
	if j < 0 {
		return false
	}
	f.distribute(l, j, f.p.units, compact)
	return true
}

// placeSpread spreads the plan over the whole topology.
func (f *fitter) placeSpread(compact bool) bool {
	if f.total() < f.p.units {
		return false
	}
	f.spread(0, 0, f.y.count(0), f.p.units, compact)
	return true
}

// assignment turns the picks into an Assignment, nodes and domains in
// layout order (sorted by label values).
func (f *fitter) assignment() *Assignment {
	picks := f.picks
	sortPicks(picks)
	a := &Assignment{
		PodSet:  f.p.ps.Name,
		Levels:  slices.Clone(f.y.levels),
		Nodes:   make([]NodeCount, len(picks)),
		Request: f.p.ps.Request,
		lay:     f.y,
		req:     f.p.req,
		nodeIdx: make([]int32, len(picks)),
	}
	L := len(f.y.levels)
	values := make([]string, 0, len(picks)*L) // one backing array for all paths
	prev := int32(-1)
	for k, pk := range picks {
		a.Nodes[k] = NodeCount{Name: f.y.names[pk.node], Count: int32(pk.count)}
		a.nodeIdx[k] = int32(pk.node)
		if d := f.y.leaf[pk.node]; d != prev {
			values = f.y.appendPath(values, L-1, int(d))
			a.Domains = append(a.Domains, DomainCount{Values: values[len(values)-L:]})
			prev = d
		}
		a.Domains[len(a.Domains)-1].Count += int32(pk.count)
	}
	return a
}

func sortPicks(p []pick) {
	slices.SortFunc(p, func(a, b pick) int { return cmp.Compare(a.node, b.node) })
}
