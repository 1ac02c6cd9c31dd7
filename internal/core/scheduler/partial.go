package scheduler

import (
	"sort"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
)

// Partial admission (Kueue's): a pod set with a MinCount may be admitted
// with fewer pods than it asks, down to MinCount, when all of them do not
// fit. The counts are searched, not stepped: every pod set that may shrink
// gives up the same share of what it may give up, and a binary search finds
// the smallest share that fits, so a 1,000-pod set costs ten assignments.
// Only counts that fit without preempting are taken: evicting a whole job
// to run part of another trades work done for work smaller than asked.

// shrinkSteps is the share of the room to shrink every pod set gives up
// at step k of d: pod set i runs Count - ceil(delta_i * k / d) pods,
// rounded down to whole slices of a pod set placed in slices (unit): only
// whole slices fit, so a count between two multiples fits no better than
// the one below, and rounding keeps fit monotonic in k for the search.
type shrinkSteps struct {
	full, min, unit []int32
	d               int32
}

func newShrinkSteps(wl *core.Workload, floor func(*core.PodSet) int32) shrinkSteps {
	s := shrinkSteps{}
	for i := range wl.PodSets {
		ps := &wl.PodSets[i]
		lo := min(max(floor(ps), 1), ps.Count)
		unit := int32(1)
		if t := ps.Topology; t != nil && t.SliceSize > 1 {
			unit = t.SliceSize
		}
		s.full = append(s.full, ps.Count)
		s.min = append(s.min, lo)
		s.unit = append(s.unit, unit)
		s.d = max(s.d, ps.Count-lo)
	}
	return s
}

// counts are the pod set counts at step k (0: as asked; d: the minimum).
func (s shrinkSteps) counts(k int32) []int32 {
	out := make([]int32, len(s.full))
	for i := range s.full {
		delta := int64(s.full[i] - s.min[i])
		n := s.full[i] - int32((delta*int64(k)+int64(s.d)-1)/int64(s.d))
		if k > 0 && n > s.min[i] {
			n = max(n/s.unit[i]*s.unit[i], s.min[i])
		}
		out[i] = n
	}
	return out
}

// search finds the smallest step at which the workload fits without
// preempting, and the admission there; nil when not even the minimum does.
func (s shrinkSteps) search(snap *Snapshot, q *quota.QueueSnapshot, wl *core.Workload) (*core.Admission, FitMode) {
	if s.d == 0 {
		return nil, Unfit
	}
	fits := func(k int32) (*core.Admission, FitMode) {
		adm, mode, _ := Assign(snap, q, core.WithCounts(wl, s.counts(k)))
		if mode < FitBorrow {
			return nil, Unfit
		}
		return adm, mode
	}
	k := int32(sort.Search(int(s.d), func(i int) bool {
		_, mode := fits(int32(i) + 1)
		return mode >= FitBorrow
	})) + 1
	if k > s.d {
		return nil, Unfit
	}
	return fits(k)
}

// AssignPartial is the admission of the most pods, no fewer than each pod
// set's MinCount, that fits the queue without preempting.
func AssignPartial(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload) (*core.Admission, FitMode) {
	if !wl.Shrinkable() {
		return nil, Unfit
	}
	steps := newShrinkSteps(wl, func(ps *core.PodSet) int32 {
		if ps.MinCount > 0 {
			return ps.MinCount
		}
		return ps.Count
	})
	return steps.search(s, q, wl)
}

// shortfallOf says, for a workload that does not fit, how many pods of its
// first pod set that could shrink would fit, searching down to one pod
// (or, for a pod set that may shrink, its minimum): the hint that the job
// could run smaller, or that even its minimum does not fit. Nil when no
// pod set has more than one pod.
func shortfallOf(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload) *core.Shortfall {
	partial := wl.Shrinkable()
	steps := newShrinkSteps(wl, func(ps *core.PodSet) int32 {
		if partial {
			return max(ps.MinCount, 1)
		}
		return 1
	})
	if steps.d == 0 || !partial && len(wl.PodSets) > 1 {
		// A job of several pod sets that allows no partial admission
		// gets no hint: which pod set to shrink is the owner's call.
		return nil
	}
	i := firstShrinking(steps)
	ps := &wl.PodSets[i]
	sf := &core.Shortfall{PodSet: ps.Name, Asked: ps.Count, Min: ps.Count}
	if partial {
		sf.Min = steps.min[i]
	}
	if !partial {
		// A shrinkable workload got here because its minimum did not fit.
		if adm, _ := steps.search(s, q, wl); adm != nil {
			sf.Fits = adm.PodSets[i].Count
		}
	}
	if sf.String() == "" {
		return nil
	}
	return sf
}

func firstShrinking(s shrinkSteps) int {
	for i := range s.full {
		if s.full[i] > s.min[i] {
			return i
		}
	}
	return 0
}
