package scheduler

// The starvation guard. Under BestEffortFIFO a workload that does not fit
// is passed by later ones that do, so a 16-GPU job behind a stream of
// 1-GPU jobs may never see 16 GPUs free at once (Kueue #8309). Once a
// workload has waited its queue's StarvationAfter, its room is held: what
// is free of its queue's nominal quota, up to what it asks, is kept from
// every workload decided after it in its queue and from borrowers of the
// cohort, and so grows as the queue's workloads finish, until it fits.
//
// Held room need not idle meanwhile: a workload with a runtime bound (its
// maximum execution time, enforced by deactivation) that ends no later than
// the held room would be complete may use it — backfill. When that will be
// is estimated from the bounds of the queue's admitted workloads; when they
// declare none, nobody can be shown to finish in time and nothing
// backfills.
//
// The reservation lives in the cycle, like the room held for a waiting
// preemptor: nothing is written, and a restarted scheduler holds the same
// room on its first cycle, since how long a workload waited is in its
// object.

import (
	"sort"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
)

// DefaultStarvationYieldFactor times a queue's StarvationAfter is how long
// a workload waits before room held for another yields to it, unless the
// queue says otherwise. The starvation simulation (test/sim, YieldSweep)
// chose it: a held room that never yields lets the small jobs' waits grow
// for as long as the queue is oversubscribed; yielding sooner than this
// cuts their tail only by lengthening the large jobs' more (on the
// simulated day, 8 thresholds: 1-GPU p99 -52 min, 16-GPU p99 +241 min),
// and from this on neither size's p99 is worse than never yielding.
const DefaultStarvationYieldFactor = 10

// DefaultStarvationYield is the yield of a queue holding room after
// starvationAfter (zero: no guard, nothing to yield).
func DefaultStarvationYield(starvationAfter time.Duration) time.Duration {
	return DefaultStarvationYieldFactor * starvationAfter
}

// reservation is the room held in one queue for its starving workload.
type reservation struct {
	wl *core.Workload
	// adm is the admission it waits for: the flavors its room is held on.
	adm *core.Admission
	// need is what the workload asks, held is what of it is set aside now.
	need, held core.Usage
	// domains is the free capacity held in the topology domains where its
	// pod sets would fit first, for those that ask for a level.
	domains []*core.Placement
	// completeAt is when the held room is estimated to be enough for it;
	// zero when the running workloads' bounds cannot say.
	completeAt time.Time
}

// starving reports whether the workload has waited its queue's
// StarvationAfter.
func starving(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload) bool {
	left, ok := untilWaited(s, wl, q.StarvationAfter)
	return ok && left == 0
}

// untilWaited is how long until wl has waited d since its creation (0 once
// it has); false when there is no d or the times are not known.
func untilWaited(s *Snapshot, wl *core.Workload, d time.Duration) (time.Duration, bool) {
	if d <= 0 || s.now.IsZero() || wl.Created.IsZero() {
		return 0, false
	}
	return max(0, wl.Created.Add(d).Sub(s.now)), true
}

// parkUntilWaited has a parked decision tried again when wl will have
// waited d (RetryAfter; the scheduler parks it with Queues.ParkUntil).
func parkUntilWaited(s *Snapshot, wl *core.Workload, d time.Duration, dec Decision) Decision {
	if !dec.Park {
		return dec
	}
	if left, ok := untilWaited(s, wl, d); ok && left > 0 {
		dec.RetryAfter = left
	}
	return dec
}

// runtimeBound is the longest a workload runs once admitted: its own
// maximum execution time, else its queue's; zero is unbounded.
func runtimeBound(q *quota.QueueSnapshot, wl *core.Workload) time.Duration {
	if wl.MaxRuntime > 0 {
		return wl.MaxRuntime
	}
	return q.MaxRuntime
}

// parkUntilStarving has a parked workload tried again when it starts
// starving (RetryAfter; the scheduler parks it with Queues.ParkUntil): a
// release may not come before, and later arrivals would take the room it
// is owed from then.
func parkUntilStarving(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, d Decision) Decision {
	return parkUntilWaited(s, wl, q.StarvationAfter, d)
}

// reserveIfStarving holds room for wl if it is starving and its queue
// holds none yet (the first starving workload in the queue's order gets it).
func (c *cycle) reserveIfStarving(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, noFit *core.NoFit) (Decision, bool) {
	if !starving(s, q, wl) || c.reserving[q.Name] != nil || (noFit != nil && noFit.Never) {
		return Decision{}, false
	}
	return c.reserveFor(s, q, wl, noFit)
}

// reserveFor holds room for a starving workload that does not fit now, on
// the flavors it would be admitted on once enough frees. It returns false
// when the workload could never fit its queue, or only by borrowing
// (nothing worth holding).
func (c *cycle) reserveFor(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, noFit *core.NoFit) (Decision, bool) {
	adm, mode, _ := assignUntilFree(s, q, wl)
	if adm == nil || mode == Unfit || !nominalCouldHold(q, adm.Usage()) {
		return Decision{}, false
	}
	r := &reservation{wl: wl, adm: adm, need: adm.Usage()}
	r.hold(s, q)
	r.completeAt = completionEstimate(s, q, r)
	c.reserving[q.Name] = r
	c.block(q, wl)
	if noFit != nil {
		noFit.Shortfall = shortfallOf(s, q, wl)
	}
	return Decision{Workload: wl, Pending: core.Pending{Kind: core.Reserved, ClusterQueue: q.Name, Wait: q.StarvationAfter,
		By: r.completeAt, Detail: r.waitsFor(), NoFit: noFit}}, true
}

// nominalCouldHold reports whether the queue's nominal quota alone could
// hold the usage, with nothing else admitted. A workload that needs more can only run on room its cohort
// lends, which no room held in its own queue makes come: holding that
// would idle the queue's quota, with nothing able to backfill (when the
// rest frees is not the queue's to say), for as long as the other queues
// keep their own quota.
func nominalCouldHold(q *quota.QueueSnapshot, need core.Usage) bool {
	for fr, v := range need {
		if v > q.Nominal(fr) {
			return false
		}
	}
	return true
}

// hold sets aside what is free of the queue's nominal quota, up to what
// the workload needs (holdable), and the free capacity of the topology domains it
// would fit in first. Only headroom under the nominal quota is held: what
// the cohort lends is other queues' guaranteed quota, and holding it would
// make the queue look like a borrower to their reclaiming preemptors.
func (r *reservation) hold(s *Snapshot, q *quota.QueueSnapshot) {
	r.held = holdable(q, r.need)
	for fr, v := range r.held {
		q.Tree.AddReserve(fr, v)
	}
	r.domains = holdDomains(s, r.wl, r.adm)
}

// release gives the held room back, for a backfill to use.
func (r *reservation) release(s *Snapshot, q *quota.QueueSnapshot) {
	for fr, v := range r.held {
		q.Tree.AddReserve(fr, -v)
	}
	releasePlacements(s, r.domains)
	r.held, r.domains = nil, nil
}

// holdDomains takes, for each of the workload's pod sets that asks for a
// topology level, the free capacity of the domain where most of its pods
// fit (topology.Snapshot.Hold), so that smaller jobs placed meanwhile go
// elsewhere: quota alone would let them fill the very rack it waits for.
func holdDomains(s *Snapshot, wl *core.Workload, adm *core.Admission) []*core.Placement {
	q := s.Queue(adm.ClusterQueue)
	units, fail := placementUnits(s, wl, adm, func(_ int, f *core.Flavor) bool {
		return q == nil || !s.PlacementDelayed(q, f.Name)
	})
	if fail != nil {
		return nil
	}
	var held []*core.Placement
	for _, u := range units {
		ts := s.Topologies[u.flavor.Topology]
		for i := range u.sets {
			a, err := ts.Hold(&u.sets[i])
			if err != nil || a == nil || ts.Apply(a) != nil {
				continue
			}
			held = append(held, &core.Placement{Topology: u.flavor.Topology, Assignment: a})
		}
	}
	return held
}

// waitsFor says, when the held room's completion is not known, why.
func (r *reservation) waitsFor() string {
	switch {
	case !r.completeAt.IsZero():
		return ""
	case len(r.domains) > 0:
		return "it waits for nodes in one topology domain, which the quota's runtime bounds do not say when free up"
	}
	return "the workloads in its way declare no maximum execution time"
}

// backfills reports whether wl may use the held room: its bound ends no
// later than the held room would be complete, or it has waited the queue's
// StarvationYieldAfter (yields).
func (r *reservation) backfills(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload) bool {
	if yields(s, q, wl) {
		return true
	}
	bound := runtimeBound(q, wl)
	return bound > 0 && !r.completeAt.IsZero() && !s.now.Add(bound).After(r.completeAt)
}

// yields reports whether wl has waited long enough that room held for
// another yields to it: what the guard may cost the workloads behind it.
func yields(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload) bool {
	left, ok := untilWaited(s, wl, q.StarvationYieldAfter)
	return ok && left == 0
}

// completionEstimate is when the room held for the reservation will be
// what it needs: the queue's admitted workloads free their quota by their
// runtime bound (evicting ones at once), latest last. Zero when those with
// a bound do not free enough, or when the quota is all held and the
// workload waits for nodes in one topology domain (which workloads free
// those is not estimated).
func completionEstimate(s *Snapshot, q *quota.QueueSnapshot, r *reservation) time.Time {
	short := core.Usage{}
	for fr, v := range r.need {
		if d := v - r.held[fr]; d > 0 {
			short[fr] = d
		}
	}
	if len(short) == 0 {
		return time.Time{}
	}
	type ending struct {
		at    time.Time
		usage core.Usage
	}
	var ends []ending
	for _, w := range q.Workloads {
		if w.Admission == nil {
			continue
		}
		switch bound := runtimeBound(q, w); {
		case w.Evicting:
			ends = append(ends, ending{s.now, w.Admission.Usage()})
		case bound > 0 && !w.AdmittedAt.IsZero():
			ends = append(ends, ending{w.AdmittedAt.Add(bound), w.Admission.Usage()})
		}
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i].at.Before(ends[j].at) })
	for _, e := range ends {
		for fr, v := range e.usage {
			if _, ok := short[fr]; ok {
				short[fr] -= v
				if short[fr] <= 0 {
					delete(short, fr)
				}
			}
		}
		if len(short) == 0 {
			if e.at.Before(s.now) {
				return s.now
			}
			return e.at
		}
	}
	return time.Time{}
}

// decideBehind decides a workload of a queue that holds room for a
// starving one: it may take room beyond what is held, or the held room
// itself if it backfills; it never preempts (what it would free is the
// starving workload's).
func (c *cycle) decideBehind(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, r *reservation, deferBorrowing bool) (Decision, bool) {
	backfill := r.backfills(s, q, wl)
	// As in decide: the room only shrinks during a cycle, so later
	// workloads of a shape that did not fit (as a backfill or not) and no
	// higher priority fail alike, and a long queue behind a reservation
	// costs one attempt per shape.
	class := shapeInQueue{queue: q.Name, shape: wl.ShapeKey(), behindReservation: true, backfill: backfill}
	if f, ok := c.failed[class]; ok && wl.Priority <= f.priority {
		return untilYield(s, q, wl, Decision{Workload: wl, Pending: f.pending, Park: q.Strategy == core.BestEffortFIFO}), false
	}
	if backfill {
		r.release(s, q)
		defer func() {
			r.hold(s, q)
		}()
	}
	adm, mode, _ := Assign(s, q, wl)
	switch {
	case mode == FitBorrow && deferBorrowing:
		return Decision{}, true
	case mode == Fit || mode == FitBorrow:
		return c.admit(s, q, wl, adm), false
	}
	why := core.Pending{Kind: core.BehindReservation, ClusterQueue: q.Name, Workloads: []string{r.wl.Key}, By: r.completeAt, Detail: r.waitsFor(),
		Wait: q.StarvationYieldAfter}
	c.failed[class] = failure{priority: wl.Priority, pending: why}
	return untilYield(s, q, wl, Decision{Workload: wl, Pending: why, Park: q.Strategy == core.BestEffortFIFO}), false
}

// untilYield has a workload parked behind held room tried again when the
// room yields to it: nothing else may wake it then.
func untilYield(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, d Decision) Decision {
	return parkUntilWaited(s, wl, q.StarvationYieldAfter, d)
}
