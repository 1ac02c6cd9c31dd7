package topology

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// ErrStale says an assignment was made on a snapshot of another shape of
// the topology (nodes added, removed or relabelled since).
var ErrStale = errors.New("assignment belongs to another topology layout")

// Snapshot is one scheduling cycle's view of free capacity. It is not safe
// for concurrent use; the tree keeps taking events meanwhile.
type Snapshot struct {
	Version uint64

	lay  *layout
	res  *resourceIndex
	nres int
	free []int64 // free[i*nres+r]
	pods []int64 // free pod slots per node

	scratch scratch
}

// Snapshot copies the free capacity, which the tree keeps in layout order,
// so the cost is two flat copies. The layout is rebuilt only when the shape
// changed since the previous snapshot.
func (t *Tree) Snapshot() *Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lay == nil {
		t.lay = buildLayout(t.levels, t.sorted)
	}
	if t.rows == nil {
		t.rows = buildRows(t.lay, len(t.res.names))
	}
	return &Snapshot{
		Version: t.version,
		lay:     t.lay,
		res:     t.res,
		nres:    t.rows.nres,
		free:    slices.Clone(t.rows.free),
		pods:    slices.Clone(t.rows.pods),
	}
}

func buildRows(y *layout, nres int) *rows {
	r := &rows{nres: nres, free: make([]int64, len(y.entries)*nres), pods: make([]int64, len(y.entries))}
	for i, e := range y.entries {
		copy(r.free[i*nres:(i+1)*nres], e.free)
		r.pods[i] = max(e.podCap-e.podsUsed, 0)
	}
	return r
}

// Clone copies the snapshot's free capacity, for a cycle that wants to try
// a batch of placements and keep or drop them as a whole.
func (s *Snapshot) Clone() *Snapshot {
	return &Snapshot{
		Version: s.Version,
		lay:     s.lay,
		res:     s.res,
		nres:    s.nres,
		free:    append([]int64(nil), s.free...),
		pods:    append([]int64(nil), s.pods...),
	}
}

// Levels returns the level label keys, coarsest first.
func (s *Snapshot) Levels() []string { return s.lay.levels }

// Nodes returns the number of nodes in the topology.
func (s *Snapshot) Nodes() int { return len(s.lay.names) }

// Free returns a node's free capacity and pod slots in this snapshot.
func (s *Snapshot) Free(node string) (Resources, int64, bool) {
	i, ok := s.lay.index(node)
	if !ok {
		return nil, 0, false
	}
	r := Resources{}
	for k, name := range s.res.names[:s.nres] {
		r[name] = s.free[int(i)*s.nres+k]
	}
	return r, s.pods[i], true
}

// Apply takes an assignment's capacity in this snapshot, so later
// placements of the cycle do not count on it. It changes nothing and
// returns an error when some node no longer has room.
func (s *Snapshot) Apply(a *Assignment) error {
	if a.lay != s.lay {
		return ErrStale
	}
	for k, i := range a.nodeIdx {
		if fit := s.fit(int(i), a.req); fit < int64(a.Nodes[k].Count) {
			return fmt.Errorf("node %s holds %d more pods of pod set %s, the assignment puts %d there", a.Nodes[k].Name, fit, a.PodSet, a.Nodes[k].Count)
		}
	}
	s.addAssignment(a, -1)
	return nil
}

// Unapply gives back what Apply took.
func (s *Snapshot) Unapply(a *Assignment) error {
	if a.lay != s.lay {
		return ErrStale
	}
	s.addAssignment(a, 1)
	return nil
}

// ApplyAll applies several assignments, all or none.
func (s *Snapshot) ApplyAll(as []*Assignment) error {
	for k, a := range as {
		if err := s.Apply(a); err != nil {
			for _, done := range as[:k] {
				_ = s.Unapply(done)
			}
			return err
		}
	}
	return nil
}

func (s *Snapshot) addAssignment(a *Assignment, sign int64) {
	for k, i := range a.nodeIdx {
		n := sign * int64(a.Nodes[k].Count)
		for _, q := range a.req {
			if q.res >= 0 { // a resource no node has takes nothing
				s.free[int(i)*s.nres+q.res] += n * q.amount
			}
		}
		s.pods[i] += n
	}
}

// lookup returns a resource's position in the snapshot's rows, or -1.
func (s *Snapshot) lookup(name string) int {
	if r := s.res.lookup(name); r < s.nres {
		return r
	}
	return -1
}

// request is one requested resource of a pod, by position (-1 when no
// node has it). limit is the most pods whose request fits an int64.
type request struct {
	res    int
	amount int64
	limit  int64
}

func newRequest(res int, amount int64) request {
	return request{res: res, amount: amount, limit: math.MaxInt64 / amount}
}

// fit returns how many pods with the given requests node i holds: the
// minimum over resources of free/request, and the free pod slots. It
// divides only when a resource binds tighter than the bound so far, which
// is rare after the first: a multiplication is much cheaper.
func (s *Snapshot) fit(i int, req []request) int64 {
	n := s.pods[i]
	row := s.free[i*s.nres : (i+1)*s.nres]
	for _, q := range req {
		if q.res < 0 {
			return 0
		}
		if free := row[q.res]; n > q.limit || n*q.amount > free {
			n = free / q.amount
		}
	}
	return max(n, 0)
}

// Bind returns a copy of an assignment made elsewhere (read back from an
// admitted workload's status, or placed on an older snapshot) tied to this
// snapshot's layout, so Apply and Unapply can take or give back its
// capacity: a preemption search releases its victims' nodes this way.
// Nodes no longer in the topology are left out: their capacity is gone.
func (s *Snapshot) Bind(a *Assignment) *Assignment {
	b := *a
	b.lay, b.Nodes, b.nodeIdx = s.lay, nil, nil
	for _, n := range a.Nodes {
		if i, ok := s.lay.index(n.Name); ok && n.Count > 0 {
			b.Nodes = append(b.Nodes, n)
			b.nodeIdx = append(b.nodeIdx, i)
		}
	}
	b.req = b.req[:0:0]
	for _, name := range slices.Sorted(maps.Keys(a.Request)) {
		if v := a.Request[name]; v > 0 {
			b.req = append(b.req, newRequest(s.lookup(name), v))
		}
	}
	return &b
}

// DomainCounts returns the number of domains at each level, coarsest first.
func (s *Snapshot) DomainCounts() []int {
	out := make([]int, len(s.lay.levels))
	for l := range out {
		out[l] = s.lay.count(l)
	}
	return out
}

// Replace moves the pods an assignment has on the lost nodes elsewhere,
// keeping the others where they are: inside the domain of level that held
// them when level is set (the pod set's required level), anywhere the
// pod set fits otherwise. ps is the pod set as placed, its Count ignored.
// The result is bound to this snapshot and not applied; the capacity the
// old assignment holds on the kept nodes is already counted here.
func (s *Snapshot) Replace(a *Assignment, lost []string, ps PodSet, level string) (*Assignment, error) {
	kept, moved := s.split(a, lost)
	if moved == 0 {
		return s.Bind(a), nil
	}
	ps.Count, ps.SliceLevel, ps.SliceSize = moved, "", 0
	ps.Mode, ps.Level = Unconstrained, ""
	if l := slices.Index(s.lay.levels, level); l >= 0 {
		within := s.domainOf(kept, lost, l)
		inner := ps.Fits
		ps.Mode, ps.Level = Required, level
		ps.Fits = func(n string) bool {
			i, ok := s.lay.index(n)
			return ok && within(int(i)) && (inner == nil || inner(n))
		}
	}
	outer := ps.Fits
	ps.Fits = func(n string) bool { return !slices.Contains(lost, n) && (outer == nil || outer(n)) }
	extra, err := s.Place(&ps)
	if err != nil {
		return nil, err
	}
	return s.merge(kept, extra), nil
}

// split returns the assignment without the lost nodes, and the pods those
// held.
func (s *Snapshot) split(a *Assignment, lost []string) (*Assignment, int32) {
	kept := *a
	kept.Nodes = nil
	var moved int32
	for _, n := range a.Nodes {
		if slices.Contains(lost, n.Name) {
			moved += n.Count
		} else {
			kept.Nodes = append(kept.Nodes, n)
		}
	}
	return s.Bind(&kept), moved
}

// domainOf returns a test for "node position i lies in the level-l domain
// of the kept nodes" (of the lost ones when none is kept).
func (s *Snapshot) domainOf(kept *Assignment, lost []string, l int) func(int) bool {
	ref := -1
	if len(kept.nodeIdx) > 0 {
		ref = int(kept.nodeIdx[0])
	} else {
		for _, n := range lost {
			if i, ok := s.lay.index(n); ok {
				ref = int(i)
				break
			}
		}
	}
	if ref < 0 {
		return func(int) bool { return true } // the domain is gone with its nodes
	}
	d := s.lay.leafAt(l, ref)
	lo, hi := s.lay.nodes(l, d)
	return func(i int) bool { return i >= lo && i < hi }
}

// merge adds extra's pods to kept's, both bound to this snapshot, into one
// assignment in layout order.
func (s *Snapshot) merge(kept, extra *Assignment) *Assignment {
	counts := map[int32]int32{}
	for k, i := range kept.nodeIdx {
		counts[i] += kept.Nodes[k].Count
	}
	for k, i := range extra.nodeIdx {
		counts[i] += extra.Nodes[k].Count
	}
	idx := make([]int32, 0, len(counts))
	for i := range counts {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	out := &Assignment{PodSet: kept.PodSet, Levels: slices.Clone(s.lay.levels), Request: kept.Request, lay: s.lay, req: extra.req}
	L := len(s.lay.levels)
	prev := int32(-1)
	for _, i := range idx {
		out.Nodes = append(out.Nodes, NodeCount{Name: s.lay.names[i], Count: counts[i]})
		out.nodeIdx = append(out.nodeIdx, i)
		if d := s.lay.leaf[i]; d != prev {
			out.Domains = append(out.Domains, DomainCount{Values: s.lay.path(L-1, int(d))})
			prev = d
		}
		out.Domains[len(out.Domains)-1].Count += counts[i]
	}
	return out
}
