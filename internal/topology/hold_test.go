package topology

import "testing"

// TestHoldPicksTheDomainWhereMostFit: racks with 2, 3 and 3 free GPUs; a
// 4-GPU pod set required in one rack holds the first rack of 3, all of it;
// an unconstrained one holds nothing, and one too big for a rack holds
// what fits in the best.
func TestHoldPicksTheDomainWhereMostFit(t *testing.T) {
	tr := newTree(t, concat(rackHosts("b1", "r1", 2, 1), rackHosts("b1", "r2", 3, 1), rackHosts("b1", "r3", 3, 1))...)
	s := tr.Snapshot()
	a, err := s.Hold(&PodSet{Name: "main", Count: 4, Request: Resources{gpu: 1}, Mode: Required, Level: rack})
	if err != nil || a == nil {
		t.Fatalf("hold: %v, %v", a, err)
	}
	if len(a.Domains) != 3 || a.Domains[0].Values[1] != "r2" {
		t.Fatalf("held %+v, want the three nodes of r2", a.Domains)
	}
	if err := s.Apply(a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Place(&PodSet{Name: "small", Count: 1, Request: Resources{gpu: 1}, Mode: Required, Level: rack}); err != nil {
		t.Fatalf("a small pod set still fits elsewhere: %v", err)
	}
	for _, n := range []string{"r2-0", "r2-1", "r2-2"} {
		if free, _, _ := s.Free(n); free[gpu] != 0 {
			t.Errorf("%s keeps %d GPUs free after the hold", n, free[gpu])
		}
	}
	if a, _ := s.Hold(&PodSet{Name: "any", Count: 4, Request: Resources{gpu: 1}}); a != nil {
		t.Errorf("unconstrained pod sets hold no domain: %+v", a)
	}
}
