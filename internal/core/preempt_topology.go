package core

import (
	"github.com/musterhq/muster/internal/topology"
)

// fitCheck is what a preemption search asks after each candidate it takes
// or puts back: does the preemptor fit the quota now and, when its flavors
// have a topology, can its pods be placed on the nodes the victims free?
// Victims are picked for the quota first and, with a topology, until one
// domain holds the preemptor: greedyMinimal's put-back pass then returns
// the victims whose nodes do not help, so they are not scattered.
type fitCheck struct {
	s    *Snapshot
	q    *QueueSnapshot
	wl   *Workload
	adm  *Admission
	need Usage
	// sim is the cycle's snapshot with copies of the topologies the
	// admission's flavors use; nil when none has one.
	sim *Snapshot
}

func newFitCheck(s *Snapshot, q *QueueSnapshot, wl *Workload, adm *Admission) *fitCheck {
	fc := &fitCheck{s: s, q: q, wl: wl, adm: adm, need: adm.Usage()}
	flavors := topologyFlavors(s, adm)
	if len(flavors) == 0 {
		return fc
	}
	sim := *s
	sim.topologies = make(map[string]*topology.Snapshot, len(s.topologies))
	for name, ts := range s.topologies {
		sim.topologies[name] = ts
	}
	for _, f := range flavors {
		name := s.Flavor(f).Topology
		if ts := s.topologies[name]; ts != nil && sim.topologies[name] == ts {
			sim.topologies[name] = ts.Clone()
		}
	}
	fc.sim = &sim
	return fc
}

// fits reports whether the preemptor fits with the candidates taken so far.
func (fc *fitCheck) fits(borrow bool) bool {
	if !fitsAfter(fc.q, fc.need, borrow) {
		return false
	}
	if fc.sim == nil {
		return true
	}
	trial := *fc.adm
	trial.PodSets = append([]PodSetAssignment(nil), fc.adm.PodSets...)
	return placeAdmission(fc.sim, fc.wl, &trial) == nil
}

// remove takes a candidate's quota and, in the copies, its nodes.
func (fc *fitCheck) remove(c candidate) {
	c.queue.RemoveUsage(c.wl.Admission.Usage())
	fc.move(c.wl, false)
}

// restore puts a candidate back.
func (fc *fitCheck) restore(c candidate) {
	c.queue.AddUsage(c.wl.Admission.Usage())
	fc.move(c.wl, true)
}

func (fc *fitCheck) removeAll(cs []candidate) {
	for _, c := range cs {
		fc.remove(c)
	}
}

func (fc *fitCheck) restoreAll(cs []candidate) {
	for _, c := range cs {
		fc.restore(c)
	}
}

// move frees (take false) or takes again what a workload holds in the
// copied topologies: its pods where they are, and its placements' unfilled
// room.
func (fc *fitCheck) move(w *Workload, take bool) {
	if fc.sim == nil {
		return
	}
	for name, as := range fc.s.footprints[w.Key] {
		ts := fc.sim.topologies[name]
		if ts == nil || ts == fc.s.topologies[name] {
			continue // not copied: the preemptor does not place there
		}
		for _, a := range as {
			b := ts.Bind(a)
			if take {
				_ = ts.Apply(b)
			} else {
				_ = ts.Unapply(b)
			}
		}
	}
}
