package topology

import (
	"cmp"
	"fmt"
	"slices"
)

// PlaceGroup places pod sets that must share one domain, such as a
// PyTorchJob's master and workers: all sets share the Mode and Level of
// the first. The domain is the tightest one where every set fits alone and
// all fit together, the largest set placed first, each compactly. This is
// greedy, not a search: a domain where only another arrangement of the
// sets would fit is passed over. Nothing is taken from the
// snapshot; ApplyAll takes the returned assignments, in the given order.
func (s *Snapshot) PlaceGroup(sets []PodSet) ([]*Assignment, error) {
	plans, err := s.compileGroup(sets)
	if err != nil {
		return nil, err
	}
	mode, level := sets[0].Mode, plans[0].level
	switch mode {
	case Required:
		return s.placeGroupIn(plans, level)
	case Preferred:
		for l := level; l >= 0; l-- {
			if as, err := s.placeGroupIn(plans, l); err == nil {
				return as, nil
			}
		}
	}
	return s.placeEach(plans)
}

func (s *Snapshot) compileGroup(sets []PodSet) ([]*plan, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("%w: empty group", ErrInvalid)
	}
	plans := make([]*plan, len(sets))
	for i := range sets {
		if sets[i].Mode != sets[0].Mode || sets[i].Level != sets[0].Level {
			return nil, fmt.Errorf("%w %s: a group shares one mode and level, %s has %s %q", ErrInvalid, sets[i].Name, sets[0].Name, sets[0].Mode, sets[0].Level)
		}
		p, err := s.compile(&sets[i])
		if err != nil {
			return nil, err
		}
		plans[i] = p
	}
	return plans, nil
}

// placeGroupIn tries the domains of level l where every set fits alone,
// tightest first, until all sets fit together in one.
func (s *Snapshot) placeGroupIn(plans []*plan, l int) ([]*Assignment, error) {
	cands, err := s.groupCandidates(plans, l)
	if err != nil {
		return nil, err
	}
	order := bySize(plans)
	for _, j := range cands {
		if as := s.tryGroupIn(plans, order, l, j); as != nil {
			return as, nil
		}
	}
	return nil, &NoFit{
		PodSet: plans[order[0]].ps.Name, Mode: Required, Level: s.lay.levels[l],
		Count: plans[order[0]].ps.Count, Need: need(plans[order[0]].ps), Group: names(plans),
		SliceLevel: plans[order[0]].ps.SliceLevel, SliceSize: plans[order[0]].ps.SliceSize,
	}
}

// groupCandidates returns the domains of level l where every set fits
// alone, ordered by how tight the tightest set is there (its spare units
// per unit needed). The NoFit of the first set that fits nowhere is the
// error.
func (s *Snapshot) groupCandidates(plans []*plan, l int) ([]int, error) {
	// slack[j] is the least spare ratio over the sets so far, or one of:
	const unseen, excluded = -1.0, -2.0
	slack := make([]float64, s.lay.count(l))
	for j := range slack {
		slack[j] = unseen
	}
	for _, p := range plans {
		f := s.fitter(p)
		f.compute(-1, 0)
		left := 0
		for j := range slack {
			u := f.unitsOf(l, j)
			switch r := float64(u-p.units) / float64(p.units); {
			case u < p.units:
				slack[j] = excluded
			case slack[j] == unseen || slack[j] >= 0 && r < slack[j]:
				slack[j] = r
			}
			if slack[j] != excluded {
				left++
			}
		}
		if left == 0 {
			e := f.noFitAt(l)
			e.Group = names(plans)
			return nil, e
		}
	}
	var cands []int
	for j, r := range slack {
		if r >= 0 {
			cands = append(cands, j)
		}
	}
	slices.SortStableFunc(cands, func(a, b int) int { return cmp.Compare(slack[a], slack[b]) })
	return cands, nil
}

// tryGroupIn places the sets one by one in domain j of level l, taking
// each one's capacity tentatively so the next sees what is left; it gives
// everything back before returning.
func (s *Snapshot) tryGroupIn(plans []*plan, order []int, l, j int) []*Assignment {
	as := make([]*Assignment, len(plans))
	var applied []*Assignment
	defer func() {
		for _, a := range applied {
			_ = s.Unapply(a)
		}
	}()
	for _, i := range order {
		f := s.fitter(plans[i])
		f.compute(l, j)
		if f.unitsOf(l, j) < plans[i].units {
			return nil
		}
		f.distribute(l, j, plans[i].units, true)
		as[i] = f.assignment()
		if err := s.Apply(as[i]); err != nil {
			return nil
		}
		applied = append(applied, as[i])
	}
	return as
}

// placeEach is the last resort of a preferred group: each set placed on
// its own, after the ones before it.
func (s *Snapshot) placeEach(plans []*plan) ([]*Assignment, error) {
	as := make([]*Assignment, len(plans))
	var applied []*Assignment
	defer func() {
		for _, a := range applied {
			_ = s.Unapply(a)
		}
	}()
	for _, i := range bySize(plans) {
		f := s.fitter(plans[i])
		f.compute(-1, 0)
		if !f.place() {
			e := f.noFit()
			e.Group = names(plans)
			return nil, e
		}
		as[i] = f.assignment()
		if err := s.Apply(as[i]); err != nil {
			return nil, err
		}
		applied = append(applied, as[i])
	}
	return as, nil
}

// bySize orders the sets by pod count, largest first, so the small ones
// (a master, a launcher) fill what the big ones leave.
func bySize(plans []*plan) []int {
	order := make([]int, len(plans))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(plans[b].ps.Count, plans[a].ps.Count) })
	return order
}

func names(plans []*plan) []string {
	n := make([]string, len(plans))
	for i, p := range plans {
		n[i] = p.ps.Name
	}
	return n
}
