package topology

// Hold picks, for a pod set that asks for a level and does not fit now,
// the domain of that level where the most of its pods fit, and returns an
// assignment of those pods there (at most Count), to be applied as held
// capacity: the domain a starving workload waits in, kept from others so
// that what frees there adds up instead of being taken by smaller jobs.
// It returns nil when the pod set has no level (unconstrained: any nodes
// will do, and the quota held is enough) or none of its pods fits
// anywhere. Ties go to the first domain in layout order.
func (s *Snapshot) Hold(ps *PodSet) (*Assignment, error) {
	p, err := s.compile(ps)
	if err != nil || p.level < 0 {
		return nil, err
	}
	f := s.fitter(p)
	f.compute(-1, 0)
	best, most := -1, int64(0)
	for j := range s.lay.count(p.level) {
		lo, hi := s.lay.nodes(p.level, j)
		if n := f.pods[hi] - f.pods[lo]; n > most {
			best, most = j, n
		}
	}
	if best < 0 {
		return nil, nil
	}
	lo, hi := s.lay.nodes(p.level, best)
	left := int64(ps.Count)
	for i := lo; i < hi && left > 0; i++ {
		if c := min(f.pods[i+1]-f.pods[i], left); c > 0 {
			f.picks = append(f.picks, pick{node: i, count: c})
			left -= c
		}
	}
	return f.assignment(), nil
}
