package scheduler

import (
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
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
	q    *quota.QueueSnapshot
	wl   *core.Workload
	adm  *core.Admission
	need core.Usage
	// sim is the cycle's snapshot with copies of the topologies the
	// admission's flavors use; nil when none has one.
	sim *Snapshot
	// bound are the candidates' assignments tied to the copies, made once:
	// a search frees and takes back the same candidates many times.
	bound map[boundKey][]*topology.Assignment
	// anySet spares a search putting back the victims it can do without:
	// any set that fits answers (victimsExist).
	anySet bool
}

// boundKey is a workload's assignments in one topology.
type boundKey struct{ workload, topology string }

func newFitCheck(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, adm *core.Admission) *fitCheck {
	fc := &fitCheck{s: s, q: q, wl: wl, adm: adm, need: adm.Usage()}
	flavors := topologyFlavors(s, adm)
	if len(flavors) == 0 {
		return fc
	}
	inner := *s.Snapshot
	sim := *s
	sim.Snapshot = &inner
	sim.Topologies = make(map[string]*topology.Snapshot, len(s.Topologies))
	for name, ts := range s.Topologies {
		sim.Topologies[name] = ts
	}
	for _, f := range flavors {
		name := s.Flavor(f).Topology
		if ts := s.Topologies[name]; ts != nil && sim.Topologies[name] == ts {
			sim.Topologies[name] = ts.Clone()
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
	trial.PodSets = append([]core.PodSetAssignment(nil), fc.adm.PodSets...)
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
func (fc *fitCheck) move(w *core.Workload, take bool) {
	if fc.sim == nil {
		return
	}
	for name, as := range fc.s.Footprints[w.Key] {
		ts := fc.sim.Topologies[name]
		if ts == nil || ts == fc.s.Topologies[name] {
			continue // not copied: the preemptor does not place there
		}
		for _, b := range fc.bind(boundKey{w.Key, name}, ts, as) {
			if take {
				_ = ts.Apply(b)
			} else {
				_ = ts.Unapply(b)
			}
		}
	}
}

// bind is a workload's assignments tied to a copied topology.
func (fc *fitCheck) bind(k boundKey, ts *topology.Snapshot, as []*topology.Assignment) []*topology.Assignment {
	if bs, ok := fc.bound[k]; ok {
		return bs
	}
	bs := make([]*topology.Assignment, len(as))
	for i, a := range as {
		bs[i] = ts.Bind(a)
	}
	if fc.bound == nil {
		fc.bound = map[boundKey][]*topology.Assignment{}
	}
	fc.bound[k] = bs
	return bs
}
