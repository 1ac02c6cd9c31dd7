package topology

import (
	"cmp"
	"slices"
	"sort"
)

// scratch holds a snapshot's reusable buffers, so placing does not allocate
// per node.
type scratch struct {
	pods  []int64 // prefix sums of pods fitting per node
	units []int64 // prefix sums of whole slices per slice-level domain
	cands []cand
	picks []pick
}

type cand struct {
	j     int
	units int64
	take  int64
}

type pick struct {
	node  int
	count int64
}

// fitter computes how much of one plan each domain holds and spreads the
// plan's pods over a chosen domain.
type fitter struct {
	s *Snapshot
	y *layout
	p *plan
	*scratch
}

func (s *Snapshot) fitter(p *plan) *fitter {
	n := len(s.lay.names)
	if cap(s.scratch.pods) < n+1 {
		s.scratch.pods = make([]int64, n+1)
		s.scratch.units = make([]int64, n+1)
	}
	s.scratch.pods = s.scratch.pods[:n+1]
	s.scratch.units = s.scratch.units[:n+1]
	s.scratch.picks = s.scratch.picks[:0]
	return &fitter{s: s, y: s.lay, p: p, scratch: &s.scratch}
}

// compute fills the prefix sums for the nodes of domain j at level l (all
// nodes when l is -1).
func (f *fitter) compute(l, j int) {
	lo, hi, dlo, dhi := 0, len(f.y.names), 0, f.y.count(f.p.slice)
	if l >= 0 {
		lo, hi = f.y.nodes(l, j)
		dlo, dhi = f.y.descend(l, j, j+1, f.p.slice)
	}
	f.computeNodes(lo, hi)
	f.computeSlices(dlo, dhi)
}

func (f *fitter) computeNodes(lo, hi int) {
	P := f.pods
	P[lo] = 0
	for i := lo; i < hi; i++ {
		c := int64(0)
		if f.allowed(i) {
			c = f.s.fit(i, f.p.req)
		}
		P[i+1] = P[i] + c
	}
}

// allowed says whether the plan's pods may use node i: its mask, when it
// has one for this layout, and its Fits.
func (f *fitter) allowed(i int) bool {
	ps := f.p.ps
	if m := ps.Mask; m != nil && m.lay == f.y && !m.ok[i] {
		return false
	}
	return ps.Fits == nil || ps.Fits(f.y.names[i])
}

func (f *fitter) computeSlices(dlo, dhi int) {
	if f.p.slice == f.y.nodeLevel() {
		return
	}
	U, ls := f.units, f.p.slice
	U[dlo] = 0
	for d := dlo; d < dhi; d++ {
		lo, hi := f.y.nodes(ls, d)
		U[d+1] = U[d] + (f.pods[hi]-f.pods[lo])/f.p.size
	}
}

// unitsOf returns how many units of the plan domain j at level l holds:
// slices at and above the slice level, pods below it.
func (f *fitter) unitsOf(l, j int) int64 {
	ls := f.p.slice
	switch {
	case l < ls && ls == f.y.nodeLevel():
		lo, hi := f.y.nodes(l, j)
		return f.pods[hi] - f.pods[lo]
	case l < ls:
		lo, hi := f.y.descend(l, j, j+1, ls)
		return f.units[hi] - f.units[lo]
	case l == ls:
		lo, hi := f.y.nodes(l, j)
		return (f.pods[hi] - f.pods[lo]) / f.p.size
	default:
		lo, hi := f.y.nodes(l, j)
		return f.pods[hi] - f.pods[lo]
	}
}

// total returns the units the whole topology holds.
func (f *fitter) total() int64 {
	var t int64
	for j := range f.y.count(0) {
		t += f.unitsOf(0, j)
	}
	return t
}

// tightest returns the domain at level l in [lo, hi) that holds the plan
// with the least to spare, or -1; and the domain holding the most, for a
// NoFit.
func (f *fitter) tightest(l, lo, hi int) (fit, best int) {
	fit, best = -1, -1
	var fitUnits, bestUnits int64
	for j := lo; j < hi; j++ {
		u := f.unitsOf(l, j)
		if u >= f.p.units && (fit < 0 || u < fitUnits) {
			fit, fitUnits = j, u
		}
		if best < 0 || u > bestUnits {
			best, bestUnits = j, u
		}
	}
	return fit, best
}

// distribute places k units in domain j at level l, recursing down to the
// nodes; compact picks the fewest children, else the least free first.
func (f *fitter) distribute(l, j int, k int64, compact bool) {
	if l == f.y.nodeLevel() {
		f.picks = append(f.picks, pick{node: j, count: k})
		return
	}
	if l == f.p.slice {
		k *= f.p.size
	}
	f.spread(l+1, int(f.y.child[l][j]), int(f.y.child[l][j+1]), k, compact)
}

// spread places k units over the domains [lo, hi) of level l.
func (f *fitter) spread(l, lo, hi int, k int64, compact bool) {
	base := len(f.cands)
	for j := lo; j < hi; j++ {
		if u := f.unitsOf(l, j); u > 0 {
			f.cands = append(f.cands, cand{j: j, units: u})
		}
	}
	cs := f.cands[base:]
	if compact {
		fewest(cs, k)
	} else {
		leastFreeFirst(cs, k)
	}
	for i := base; i < len(f.cands); i++ {
		if c := f.cands[i]; c.take > 0 {
			f.distribute(l, c.j, c.take, compact)
		}
	}
	f.cands = f.cands[:base]
}

// fewest takes k units from the fewest candidates: the largest ones whole,
// then the smallest one that holds the rest (best fit), as Kueue's BestFit.
func fewest(cs []cand, k int64) {
	slices.SortFunc(cs, func(a, b cand) int {
		return cmp.Or(cmp.Compare(b.units, a.units), cmp.Compare(a.j, b.j))
	})
	for i := 0; k > 0 && i < len(cs); i++ {
		if cs[i].units < k {
			cs[i].take = cs[i].units
			k -= cs[i].units
			continue
		}
		// cs is descending: the last one still holding k fits best.
		// Among equals the first, for the lowest domain.
		last := i + sort.Search(len(cs)-i, func(x int) bool { return cs[i+x].units < k }) - 1
		for last > i && cs[last-1].units == cs[last].units {
			last--
		}
		cs[last].take = k
		return
	}
}

// leastFreeFirst takes k units from the candidates with the least capacity
// first.
func leastFreeFirst(cs []cand, k int64) {
	slices.SortFunc(cs, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.units, b.units), cmp.Compare(a.j, b.j))
	})
	for i := 0; k > 0 && i < len(cs); i++ {
		cs[i].take = min(cs[i].units, k)
		k -= cs[i].take
	}
}
