package topology

import (
	"cmp"
	"math"
	"slices"
)

// Balanced placement is Kueue's (TASBalancedPlacement) for a Preferred pod
// set: instead of the tightest domains, filled largest first, it spreads
// the set evenly over the fewest domains one level below the requested one,
// inside one domain of the level above it, so that no domain gets a
// sliver. In Kueue's terms, with L the requested level and S the slice
// level (the last level without slices):
//
//   - The candidates are, per domain of level L-1 (or all of level 0), its
//     domains at level L. The balance domains are their children at L+1
//     when L < S, or themselves when L = S.
//   - A candidate's threshold T is the most slices each balance domain can
//     take: the fewest balance domains that hold the set (largest first)
//     is k, and T = min(slices / k, what the last of them holds). Balance
//     domains holding fewer than T slices are dropped; the candidate with
//     the highest T wins, then the one needing the fewest level-L domains.
//   - In the winner, the fewest level-L domains are chosen (when L < S)
//     whose pods add up to the least that still holds the set, ties going
//     to the most even children (entropy); then the same among their
//     balance domains, each of which takes T slices, and what is left goes
//     to the largest first.
//
// When nothing reaches a threshold, or the chosen domains cannot take the
// slices, the set is placed as Preferred. Below the balance domains the
// pods go to the fewest nodes, as everywhere in Muster (Kueue fills the
// smallest first below a slice level). When L = S above the last level,
// Kueue drops every domain (their children count no slices) and falls back;
// here the level-L domains are balanced themselves.

// bdom is a domain's capacity for balanced placement.
type bdom struct {
	j      int   // the domain's index at its level
	slices int64 // whole slices it holds
	pods   int64 // pods it holds
	// kids are its children at the balance level, when that is below it.
	kids []bdom
}

// balanceRun is one balanced placement: the plan's levels and counts.
type balanceRun struct {
	f       *fitter
	L, S    int
	nested  bool // balance domains are the children of level-L domains
	n, need int64
	// counts is scratch for the slice counts a threshold reads.
	counts []int64
}

// placeBalanced places the plan balanced, or returns false (nothing
// picked) for the caller to fall back.
func (f *fitter) placeBalanced() bool {
	L := f.p.level
	r := &balanceRun{f: f, L: L, S: min(f.p.slice, f.y.nodeLevel()-1), n: f.p.units, need: f.p.units * f.p.size}
	if L < 0 || L > r.S {
		return false
	}
	r.nested = L < r.S
	var best []bdom
	var bestT int64
	bestK := math.MaxInt
	for _, g := range r.groups() {
		doms := r.domains(g[0], g[1])
		t := r.threshold(doms)
		if t <= 0 || t < bestT {
			continue
		}
		doms = r.prune(doms, t)
		k, _, ok := r.greedy(doms)
		if !ok || (t == bestT && k >= bestK) {
			continue
		}
		best, bestT, bestK = doms, t, k
	}
	if best == nil {
		return false
	}
	return r.place(best, bestT)
}

// groups are the candidates' ranges of level-L domains: one per domain of
// the level above, or all of level 0.
func (r *balanceRun) groups() [][2]int {
	y := r.f.y
	if r.L == 0 {
		return [][2]int{{0, y.count(0)}}
	}
	out := make([][2]int, 0, y.count(r.L-1))
	for p := range y.count(r.L - 1) {
		out = append(out, [2]int{int(y.child[r.L-1][p]), int(y.child[r.L-1][p+1])})
	}
	return out
}

// domains reads the level-L domains [lo, hi) and, nested, their children.
func (r *balanceRun) domains(lo, hi int) []bdom {
	y := r.f.y
	doms := make([]bdom, 0, hi-lo)
	var kids []bdom // one array for all the children, each domain a part
	if r.nested {
		kids = make([]bdom, 0, int(y.child[r.L][hi])-int(y.child[r.L][lo]))
	}
	for j := lo; j < hi; j++ {
		d := r.f.bdomAt(r.L, j)
		if r.nested {
			first := len(kids)
			for c := int(y.child[r.L][j]); c < int(y.child[r.L][j+1]); c++ {
				kids = append(kids, r.f.bdomAt(r.L+1, c))
			}
			d.kids = kids[first:len(kids):len(kids)]
		}
		doms = append(doms, d)
	}
	return doms
}

func (f *fitter) bdomAt(l, j int) bdom {
	lo, hi := f.y.nodes(l, j)
	return bdom{j: j, slices: f.unitsOf(l, j), pods: f.pods[hi] - f.pods[lo]}
}

// balanceDomains are the domains the slices are balanced over.
func (r *balanceRun) balanceDomains(doms []bdom) []bdom {
	if !r.nested {
		return doms
	}
	var out []bdom
	for _, d := range doms {
		out = append(out, d.kids...)
	}
	return out
}

// threshold is the most slices each balance domain can take when the
// fewest of them hold the set; 0 when they cannot.
func (r *balanceRun) threshold(doms []bdom) int64 {
	if !r.nested {
		k, last, ok := r.greedy(doms)
		if !ok {
			return 0
		}
		return min(r.n/int64(k), last)
	}
	r.counts = r.counts[:0]
	for _, d := range doms {
		for _, k := range d.kids {
			r.counts = append(r.counts, k.slices)
		}
	}
	k, last, ok := fewestHolding(r.counts, r.n)
	if !ok {
		return 0
	}
	return min(r.n/int64(k), last)
}

// prune drops the balance domains holding fewer than t slices, and the
// level-L domains left with fewer than t. It filters doms and their
// children in place: they are not read again.
func (r *balanceRun) prune(doms []bdom, t int64) []bdom {
	out := doms[:0]
	for _, d := range doms {
		if r.nested {
			kept := bdom{j: d.j, kids: d.kids[:0]}
			for _, k := range d.kids {
				if k.slices >= t {
					kept.kids = append(kept.kids, k)
					kept.slices += k.slices
					kept.pods += k.pods
				}
			}
			d = kept
		}
		if d.slices >= t {
			out = append(out, d)
		}
	}
	return out
}

// place spreads the slices over the winner's domains, t at least in each,
// and picks their nodes; false leaves no picks.
func (r *balanceRun) place(doms []bdom, t int64) bool {
	level := r.L
	if r.nested {
		chosen := r.fewestLeast(byEntropy(doms))
		if chosen == nil {
			return false
		}
		doms = r.balanceDomains(chosen)
		slices.SortFunc(doms, func(a, b bdom) int { return cmp.Compare(a.j, b.j) })
		level = r.L + 1
	}
	chosen := r.fewestLeast(doms)
	if chosen == nil || r.n < int64(len(chosen))*t {
		return false
	}
	slices.SortFunc(chosen, byCapacity)
	takes := make([]int64, len(chosen))
	extra := r.n - int64(len(chosen))*t
	for i, d := range chosen {
		more := min(d.slices-t, extra)
		takes[i], extra = t+more, extra-more
	}
	if extra > 0 {
		return false
	}
	for i, d := range chosen {
		r.f.distribute(level, d.j, takes[i], true)
	}
	return true
}

// fewestLeast chooses, among doms in the given order, as many as the
// fewest that hold the slices, whose pods add up to the least that holds
// the set's pods (the first such in order); nil when none do.
func (r *balanceRun) fewestLeast(doms []bdom) []bdom {
	doms = slices.DeleteFunc(slices.Clone(doms), func(d bdom) bool { return d.slices <= 0 })
	m, _, ok := r.greedy(doms)
	if !ok {
		return nil
	}
	return leastSubset(doms, m, r.need)
}

// greedy takes the domains holding the most slices first until they hold
// the run's slices: how many it took, how many slices the last one holds,
// and whether they held them. Which of equal domains is taken does not
// change either count, so only the counts are sorted.
func (r *balanceRun) greedy(doms []bdom) (int, int64, bool) {
	r.counts = r.counts[:0]
	for _, d := range doms {
		r.counts = append(r.counts, d.slices)
	}
	return fewestHolding(r.counts, r.n)
}

// fewestHolding is greedy on the slice counts alone; it reorders counts.
// A placement is a few slices over hundreds of nodes, so the largest count
// alone usually holds them and nothing is sorted.
func fewestHolding(counts []int64, n int64) (int, int64, bool) {
	if len(counts) == 0 {
		return 0, 0, false
	}
	if top := slices.Max(counts); top >= n {
		return 1, top, true
	}
	slices.Sort(counts)
	var sum int64
	for i := len(counts) - 1; i >= 0; i-- {
		if sum += counts[i]; sum >= n {
			return len(counts) - i, counts[i], true
		}
	}
	return 0, 0, false
}

// byCapacity orders domains by slices held, descending, then pods held,
// then layout order.
func byCapacity(a, b bdom) int {
	return cmp.Or(cmp.Compare(b.slices, a.slices), cmp.Compare(a.pods, b.pods), cmp.Compare(a.j, b.j))
}

// byEntropy orders level-L domains by slices held, descending, then by
// how evenly their children hold pods (Shannon entropy), then layout
// order: of two alike, the one that splits more evenly is chosen.
func byEntropy(doms []bdom) []bdom {
	type scored struct {
		d bdom
		h float64
	}
	s := make([]scored, len(doms))
	for i, d := range doms {
		s[i] = scored{d, entropy(d.kids)}
	}
	slices.SortStableFunc(s, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.d.slices, a.d.slices), cmp.Compare(b.h, a.h), cmp.Compare(a.d.j, b.d.j))
	})
	out := make([]bdom, len(s))
	for i := range s {
		out[i] = s[i].d
	}
	return out
}

func entropy(kids []bdom) float64 {
	var total int64
	for _, k := range kids {
		total += k.pods
	}
	var h float64
	for _, k := range kids {
		if k.pods > 0 {
			p := float64(k.pods) / float64(total)
			h -= p * math.Log(p)
		}
	}
	return h
}

// subsetBudget bounds leastSubset's table (in 64-bit words, 1 MiB), which
// a scheduling cycle allocates per balanced placement; beyond it the m
// largest are taken.
const subsetBudget = 1 << 17

// leastSubset returns m of doms, in their order, whose pods add up to the
// least total of at least need, the earliest such in order; nil if no m
// do. A table of the sums each suffix reaches with each count finds it
// exactly; a topology too large for the table gets the m largest.
func leastSubset(doms []bdom, m int, need int64) []bdom {
	var total int64
	for _, d := range doms {
		total += d.pods
	}
	words := int(total/64) + 1
	switch {
	case total < need:
		return nil
	case (len(doms)+1)*(m+1)*words > subsetBudget:
		return largest(doms, m, need)
	case m == 1:
		return leastOne(doms, need) // what the table would answer
	}
	return subsetTable(doms, m, need, words)
}

// largest is the m domains holding the most, nil if they fall short.
func largest(doms []bdom, m int, need int64) []bdom {
	top := slices.SortedFunc(slices.Values(doms), byCapacity)[:m]
	var sum int64
	for _, d := range top {
		sum += d.pods
	}
	if sum < need {
		return nil
	}
	return top
}

// subsetTable is leastSubset by the table of sums, words wide.
func subsetTable(doms []bdom, m int, need int64, words int) []bdom {
	// reach[i][c] has bit s set when c of doms[i:] sum to s pods; one
	// array holds them all.
	table := make(bitset, (len(doms)+1)*(m+1)*words)
	reach := make([][]bitset, len(doms)+1)
	for i := len(doms); i >= 0; i-- {
		reach[i] = make([]bitset, m+1)
		for c := range reach[i] {
			at := (i*(m+1) + c) * words
			reach[i][c] = table[at : at+words : at+words]
		}
		if i == len(doms) {
			reach[i][0].set(0)
			continue
		}
		for c := 0; c <= m; c++ {
			copy(reach[i][c], reach[i+1][c])
			if c > 0 {
				reach[i][c].orShifted(reach[i+1][c-1], doms[i].pods)
			}
		}
	}
	best := reach[0][m].firstFrom(need)
	if best < 0 {
		return nil
	}
	out := make([]bdom, 0, m)
	for i, c, s := 0, m, best; c > 0; i++ {
		if w := doms[i].pods; s >= w && reach[i+1][c-1].has(s-w) {
			out = append(out, doms[i])
			c, s = c-1, s-w
		}
	}
	return out
}

// leastOne is leastSubset of one domain: the first of those holding the
// fewest pods that still hold need.
func leastOne(doms []bdom, need int64) []bdom {
	best := -1
	for i, d := range doms {
		if d.pods >= need && (best < 0 || d.pods < doms[best].pods) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	return []bdom{doms[best]}
}

// bitset is a set of small non-negative integers.
type bitset []uint64

func (b bitset) set(i int64)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int64) bool { return i >= 0 && i/64 < int64(len(b)) && b[i/64]&(1<<(i%64)) != 0 }

// orShifted adds every element of o plus k.
func (b bitset) orShifted(o bitset, k int64) {
	w, s := int(k/64), uint(k%64)
	for i := len(b) - 1; i >= w; i-- {
		v := o[i-w] << s
		if s > 0 && i-w-1 >= 0 {
			v |= o[i-w-1] >> (64 - s)
		}
		b[i] |= v
	}
}

// firstFrom is the least element at least from, or -1.
func (b bitset) firstFrom(from int64) int64 {
	for i := from; i < int64(len(b))*64; i++ {
		if b.has(i) {
			return i
		}
	}
	return -1
}
