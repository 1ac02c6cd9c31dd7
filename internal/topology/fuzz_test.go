package topology

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomCluster builds a small random cluster and a pod set from a seed:
// one to three blocks of racks of nodes, some with usage, some filtered
// out, with or without a hostname level.
func randomCluster(t *testing.T, seed uint64) (*Tree, *PodSet) {
	r := rand.New(rand.NewPCG(seed, seed>>7))
	levels := threeLevels
	if r.IntN(3) == 0 {
		levels = []string{block, rack}
	}
	tr, err := New(levels)
	if err != nil {
		t.Fatal(err)
	}
	for b := range 1 + r.IntN(3) {
		for k := range 1 + r.IntN(4) {
			for n := range 1 + r.IntN(5) {
				name := fmt.Sprintf("b%d-r%d-n%d", b, k, n)
				tr.SetNode(Node{
					Name:        name,
					Labels:      map[string]string{block: fmt.Sprint("b", b), rack: fmt.Sprintf("b%d-r%d", b, k), HostnameLabel: name},
					Allocatable: Resources{gpu: int64(r.IntN(9)), cpu: int64(r.IntN(33)) * 500},
					Pods:        int64(r.IntN(11)),
				})
				if r.IntN(3) == 0 {
					tr.AddUsage(name, Usage{Resources: Resources{gpu: int64(r.IntN(4)), cpu: int64(r.IntN(8)) * 500}, Pods: int64(r.IntN(3))})
				}
			}
		}
	}
	ps := &PodSet{Name: "ps", Count: int32(1 + r.IntN(24)), Mode: Mode(r.IntN(3)), Request: Resources{}}
	if r.IntN(4) > 0 {
		ps.Request[gpu] = int64(1 + r.IntN(4))
	}
	if r.IntN(2) == 0 {
		ps.Request[cpu] = int64(r.IntN(8)) * 500
	}
	if ps.Mode != Unconstrained {
		ps.Level = levels[r.IntN(len(levels))]
	}
	ps.Balanced = ps.Mode == Preferred && r.IntN(2) == 0
	if r.IntN(3) == 0 {
		ps.SliceLevel = levels[len(levels)-1-r.IntN(2)]
		ps.SliceSize = int32(1 + r.IntN(4))
		ps.Count = ps.SliceSize * int32(1+r.IntN(6))
	}
	if r.IntN(4) == 0 {
		ps.Fits = func(n string) bool { return !strings.HasSuffix(n, "n1") }
	}
	return tr, ps
}

// FuzzPlace checks the placement invariants against brute force: an
// assignment never exceeds a node's free capacity, puts every pod exactly
// once, keeps required sets in one domain and slices whole; Apply then
// Unapply restores the snapshot; a NoFit is only returned when no domain
// holds the set.
func FuzzPlace(f *testing.F) {
	for seed := range uint64(64) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		tr, ps := randomCluster(t, seed)
		s := tr.Snapshot()
		a, err := s.Place(ps)
		if errors.Is(err, ErrInvalid) {
			return
		}
		b := bruteForce(s, ps)
		var nf *NoFit
		if errors.As(err, &nf) {
			if b.fits() {
				t.Fatalf("NoFit %v, but brute force finds room: %v", nf, b.units)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		checkAssignment(t, s, ps, a, b)
		before := s.Clone()
		if err := s.Apply(a); err != nil {
			t.Fatalf("Apply of a fresh placement: %v", err)
		}
		if err := s.Unapply(a); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(before.free, before.pods) != fmt.Sprint(s.free, s.pods) {
			t.Fatal("Apply then Unapply changed the snapshot")
		}
	})
}

// brute is an independent count of the units (slices, or pods) each
// domain at the pod set's level holds.
type brute struct {
	ps    *PodSet
	need  int64
	units map[string]int64 // by domain path at the level (one key if none)
	fit   map[string]int64 // pods fitting per node
}

func (b *brute) fits() bool {
	for _, u := range b.units {
		if u >= b.need {
			return true
		}
	}
	if b.ps.Mode == Preferred || b.ps.Mode == Unconstrained {
		var total int64
		for _, u := range b.units {
			total += u
		}
		return total >= b.need
	}
	return false
}

func bruteForce(s *Snapshot, ps *PodSet) *brute {
	size := int64(max(ps.SliceSize, 1))
	b := &brute{ps: ps, need: int64(ps.Count) / size, units: map[string]int64{}, fit: map[string]int64{}}
	perSlice := map[string]int64{}
	for i, name := range s.lay.names {
		free, pods, _ := s.Free(name)
		n := pods
		for r, v := range ps.Request {
			if v > 0 {
				n = min(n, free[r]/v)
			}
		}
		if ps.Fits != nil && !ps.Fits(name) {
			n = 0
		}
		b.fit[name] = n
		perSlice[domainKey(s, i, ps.SliceLevel)+"/"+domainKey(s, i, ps.Level)] += n
	}
	for key, pods := range perSlice {
		b.units[key[strings.Index(key, "/")+1:]] += pods / size
	}
	return b
}

// domainKey names node i's domain at the level ("" for none, the node
// itself for an empty slice level).
func domainKey(s *Snapshot, i int, level string) string {
	l := -1
	for k, key := range s.lay.levels {
		if key == level {
			l = k
		}
	}
	if l < 0 {
		if level == "" {
			return ""
		}
		return s.lay.names[i]
	}
	return strings.Join(s.lay.path(l, s.lay.leafAt(l, i)), ",")
}

func checkAssignment(t *testing.T, s *Snapshot, ps *PodSet, a *Assignment, b *brute) {
	t.Helper()
	var total int32
	domains := map[string]bool{}
	perSlice := map[string]int32{}
	for k, n := range a.Nodes {
		if int64(n.Count) > b.fit[n.Name] || n.Count <= 0 {
			t.Fatalf("%d pods on %s, which holds %d", n.Count, n.Name, b.fit[n.Name])
		}
		total += n.Count
		i := int(a.nodeIdx[k])
		domains[domainKey(s, i, ps.Level)] = true
		if ps.SliceSize > 1 {
			perSlice[domainKey(s, i, ps.SliceLevel)] += n.Count
		}
	}
	if total != ps.Count {
		t.Fatalf("%d pods assigned, want %d", total, ps.Count)
	}
	var inDomains int32
	for _, d := range a.Domains {
		inDomains += d.Count
	}
	if inDomains != ps.Count {
		t.Fatalf("domains count %d pods, want %d", inDomains, ps.Count)
	}
	if ps.Mode == Required && len(domains) != 1 {
		t.Fatalf("required pod set spread over %d domains of %s", len(domains), ps.Level)
	}
	if ps.Mode == Required {
		for key := range domains {
			for other, u := range b.units {
				if u >= b.need && u < b.units[key] {
					t.Fatalf("picked %s holding %d units, %s holds %d and is tighter", key, b.units[key], other, u)
				}
			}
		}
	}
	for key, n := range perSlice {
		if n%ps.SliceSize != 0 {
			t.Fatalf("%d pods in slice domain %s, not whole slices of %d", n, key, ps.SliceSize)
		}
	}
}

// FuzzPlaceGroup checks that a group's assignments fit together: applied
// all at once they never exceed a node's capacity, and a required group
// shares one domain.
func FuzzPlaceGroup(f *testing.F) {
	for seed := range uint64(64) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		tr, ps := randomCluster(t, seed)
		master := PodSet{Name: "master", Count: 1, Request: Resources{cpu: int64(seed%5) * 1000}, Mode: ps.Mode, Level: ps.Level, Fits: ps.Fits}
		sets := []PodSet{master, *ps}
		s := tr.Snapshot()
		as, err := s.PlaceGroup(sets)
		var nf *NoFit
		if errors.Is(err, ErrInvalid) || errors.As(err, &nf) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		domains := map[string]bool{}
		for k, a := range as {
			var total int32
			for i, n := range a.Nodes {
				total += n.Count
				domains[domainKey(s, int(a.nodeIdx[i]), ps.Level)] = true
			}
			if total != sets[k].Count || a.PodSet != sets[k].Name {
				t.Fatalf("assignment %d is %s with %d pods, want %s with %d", k, a.PodSet, total, sets[k].Name, sets[k].Count)
			}
		}
		if ps.Mode == Required && len(domains) != 1 {
			t.Fatalf("required group spread over %d domains of %s", len(domains), ps.Level)
		}
		if err := s.ApplyAll(as); err != nil {
			t.Fatalf("the group's assignments do not fit together: %v", err)
		}
	})
}

// FuzzTreeEvents checks the incremental tree against one built afresh:
// after random node, relabel, removal and usage events, with snapshots
// taken in between (so rows are kept up to date rather than rebuilt), the
// layout and every node's free capacity match a tree fed only the final
// state.
func FuzzTreeEvents(f *testing.F) {
	for seed := range uint64(32) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 3))
		tr, _ := New(threeLevels)
		type state struct {
			node Node
			set  bool
			used Usage
		}
		model := map[string]*state{}
		for range 200 {
			name := fmt.Sprint("n", r.IntN(12))
			st := model[name]
			if st == nil {
				st = &state{used: Usage{Resources: Resources{}}}
				model[name] = st
			}
			switch r.IntN(6) {
			case 0, 1:
				labels := map[string]string{block: fmt.Sprint("b", r.IntN(2)), rack: fmt.Sprint("r", r.IntN(3)), HostnameLabel: name}
				if r.IntN(5) == 0 {
					delete(labels, rack)
				}
				st.node = Node{Name: name, Labels: labels, Allocatable: Resources{gpu: int64(r.IntN(9)), cpu: int64(r.IntN(5)) * 1000}, Pods: int64(r.IntN(10))}
				if r.IntN(4) == 0 {
					st.node.Allocatable["example.com/fpga"] = 2
				}
				st.set = true
				tr.SetNode(st.node)
			case 2:
				tr.RemoveNode(name)
				delete(model, name)
			case 3, 4:
				u := Usage{Resources: Resources{gpu: int64(r.IntN(3))}, Pods: 1}
				tr.AddUsage(name, u)
				st.used.Resources[gpu] += u.Resources[gpu]
				st.used.Pods++
			case 5:
				tr.Snapshot()
			}
		}
		fresh, _ := New(threeLevels)
		for name, st := range model {
			if st.set {
				fresh.SetNode(st.node)
			}
			fresh.AddUsage(name, st.used)
		}
		got, want := tr.Snapshot(), fresh.Snapshot()
		if fmt.Sprint(got.lay.names, got.lay.value, got.lay.child, got.lay.nodeLo) != fmt.Sprint(want.lay.names, want.lay.value, want.lay.child, want.lay.nodeLo) {
			t.Fatalf("layout\n %v %v\nwant\n %v %v", got.lay.names, got.lay.value, want.lay.names, want.lay.value)
		}
		for _, name := range want.lay.names {
			gf, gp, _ := got.Free(name)
			wf, wp, _ := want.Free(name)
			if gf[gpu] != wf[gpu] || gf[cpu] != wf[cpu] || gf["example.com/fpga"] != wf["example.com/fpga"] || gp != wp {
				t.Fatalf("%s free %v %d pods, want %v %d", name, gf, gp, wf, wp)
			}
		}
	})
}
