package scheduler

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
)

// Decision is the outcome of one scheduling attempt for one workload. Kind
// says which of Admit, Repair, Evict, Preempt or Wait it is; the fields
// below say what each carries.
type Decision struct {
	Workload *core.Workload
	// Admission is the quota to reserve; nil when the workload stays pending.
	Admission *core.Admission
	// Victims are the workloads to evict so this one fits later.
	Victims []Victim
	// Evict, for an admitted workload, is why it must be evicted (its
	// queue is draining, a node of its placement failed); NoEviction
	// otherwise. EvictDetail says more, in words.
	Evict       Eviction
	EvictDetail string
	// Lost, for an admitted workload, names the failed nodes of its
	// placement: with Admission set, the new placement that replaces them;
	// with Evict NodeFailed, none could.
	Lost []string
	// Pending says why the workload stays pending; formatted only when
	// written (see Message).
	Pending core.Pending
	// Park is true when the workload should not be retried until something
	// changes (BestEffortFIFO, or an inactive queue).
	Park bool
	// NeedsPreemption is true when the workload fits only by preempting but
	// holds its room a while first; RetryAfter is when it may preempt, or
	// when a protected victim may go, or, for a parked workload, when it
	// starts starving (park it with Queues.ParkUntil).
	NeedsPreemption bool
	RetryAfter      time.Duration
	// Placing marks the placement of a workload whose admission checks
	// provisioned its nodes (see placeDelayed).
	Placing bool
}

// Eviction says why the core evicts an admitted workload. The controllers
// map it to the API's Evicted reason.
type Eviction int

const (
	NoEviction Eviction = iota
	// ClusterQueueStopped: its ClusterQueue is stopped with HoldAndDrain.
	ClusterQueueStopped
	// LocalQueueStopped: its LocalQueue is stopped with HoldAndDrain.
	LocalQueueStopped
	// NodeFailed: a node of its placement failed and no other in its
	// domain has room for the pods that were there.
	NodeFailed
)

// Message says why the workload is evicted, or stays pending, in words.
func (d *Decision) Message() string {
	switch d.Evict {
	case ClusterQueueStopped:
		return "ClusterQueue " + d.Workload.Admission.ClusterQueue + " is stopped and draining"
	case LocalQueueStopped:
		return "LocalQueue " + d.Workload.Queue + " is stopped and draining"
	case NodeFailed:
		return lostMessage(d.Lost) + " of its placement failed and no replacement fits: " + d.EvictDetail
	}
	if d.Admission != nil && len(d.Lost) > 0 {
		return lostMessage(d.Lost) + " of its placement failed; its pods there were moved"
	}
	return d.Pending.Message()
}

// AdmitsPending reports whether a decision admits a pending workload (not
// a repair of an admitted one's placement).
func (d *Decision) AdmitsPending() bool { return d.Kind() == Admit }

// Schedule runs one admission cycle over a snapshot. It tries every
// pending workload of every ClusterQueue — highest priority and oldest first
// across queues, or, with fair sharing, in the order of the cohort
// tournament — and admits each that fits. What it admits is added to the
// snapshot's usage, so the decisions of one cycle never oversubscribe quota
// together. A workload that fits only by preempting gets its victims chosen
// (they keep their quota until evicted, so nothing else takes it meanwhile).
// Under StrictFIFO a queue stops at the first workload that does not fit.
// Admitted workloads of draining queues are evicted.
func Schedule(s *Snapshot, heads map[string][]*core.Workload) []Decision {
	decisions := append(repair(s), placeDelayed(s)...)
	decisions = append(decisions, drain(s)...)
	c := &cycle{blockedBy: map[string]string{}, failed: map[shapeInQueue]failure{}, holding: map[string]*core.Workload{},
		reclaiming: map[*quota.TreeNode]core.Usage{}, reserving: map[string]*reservation{}}
	var decided []Decision
	if s.cfg.FairSharing {
		decided = scheduleFair(s, heads, c)
	} else {
		decided = schedulePriority(s, heads, c)
	}
	if len(decisions) == 0 {
		return decided
	}
	return append(decisions, decided...)
}

// maxPresized bounds the room made for a cycle's decisions up front (a
// cycle that stops at its admission budget leaves the rest of a long
// backlog undecided); past it they grow as they come.
const maxPresized = 4096

// pendingIn counts the workloads of heads: a cycle decides each at most
// once, and its decisions (large structs) are better not grown by copying.
func pendingIn(heads map[string][]*core.Workload) int {
	n := 0
	for _, wls := range heads {
		n += len(wls)
	}
	return n
}

// schedulePriority tries the workloads highest priority and oldest first
// across queues (within a queue with admission fair sharing, in its
// LocalQueues' turn).
//
// Workloads that fit within their queue's nominal quota go first; those
// that must borrow are decided after them, in the same order, so
// borrowing never takes quota a queue's own workloads could use now.
// Within a queue, priority still rules: once a workload of a queue is
// deferred, the rest of that queue (lower priority or younger) follows it
// into the second pass, so its own lower-priority workloads do not take
// the room it needs (and become its victims).
func schedulePriority(s *Snapshot, heads map[string][]*core.Workload, c *cycle) []Decision {
	type entry struct {
		cq string
		wl *core.Workload
	}
	decisions := make([]Decision, 0, min(pendingIn(heads), maxPresized))
	var deferred []entry
	held := map[string]bool{} // queues with a deferred workload
	admitted := 0
	h := newHeadHeap(orders(s, heads))
	for {
		cq, wl, ok := h.head()
		if !ok {
			break
		}
		if !s.admissionsLeft(admitted) {
			return decisions
		}
		q := s.Queue(cq)
		if held[q.Name] {
			deferred = append(deferred, entry{cq: cq, wl: wl})
			h.advance(wl)
			continue
		}
		d, borrows := c.decide(s, q, wl, true)
		if borrows {
			deferred = append(deferred, entry{cq: cq, wl: wl})
			held[q.Name] = true
		} else {
			decisions = append(decisions, d)
			admitted += countAdmission(&d)
		}
		h.advance(wl)
	}
	for _, e := range deferred {
		if !s.admissionsLeft(admitted) {
			break
		}
		d, _ := c.decide(s, s.Queue(e.cq), e.wl, false)
		decisions = append(decisions, d)
		admitted += countAdmission(&d)
	}
	return decisions
}

func countAdmission(d *Decision) int {
	if d.AdmitsPending() {
		return 1
	}
	return 0
}

// scheduleFair picks, one at a time, the head of the queue that wins the
// fair-sharing tournament of its cohort tree. As in schedulePriority,
// workloads that fit within their queue's nominal quota go first and those
// that must borrow are decided after, in a second tournament: otherwise a
// borrower whose (decayed) share is lowest would take the room a queue
// below its nominal quota just reclaimed for its own pending workload, be
// reclaimed again, and so on, every cycle.
func scheduleFair(s *Snapshot, heads map[string][]*core.Workload, c *cycle) []Decision {
	deferred := map[string][]*core.Workload{}
	decisions, admitted, stopped := fairRounds(s, orders(s, heads), c, true, 0, func(q *quota.QueueSnapshot, wl *core.Workload) {
		deferred[q.Name] = append(deferred[q.Name], wl)
	})
	if stopped || len(deferred) == 0 {
		return decisions
	}
	more, _, _ := fairRounds(s, orders(s, deferred), c, false, admitted, nil)
	return append(decisions, more...)
}

// fairRounds runs the tournament until no queue has a candidate left: the
// trees take turns, one decision each, so that a cycle stopped at its
// admission limit does not always serve the same trees first. With
// deferBorrowing, a workload that must borrow is handed to deferTo, and
// so is the rest of its queue, which priority keeps behind it. It returns
// the decisions, the admissions so far, and whether the limit stopped it.
func fairRounds(s *Snapshot, os map[string]*order, c *cycle, deferBorrowing bool, admitted int,
	deferTo func(*quota.QueueSnapshot, *core.Workload)) ([]Decision, int, bool) {
	roots := map[*quota.TreeNode]bool{}
	for cq := range os {
		roots[s.Queue(cq).Tree.Root()] = true
	}
	ordered := make([]*quota.TreeNode, 0, len(roots))
	for r := range roots {
		ordered = append(ordered, r)
	}
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].Name < ordered[j].Name })
	var decisions []Decision
	held := map[string]bool{}
	for len(ordered) > 0 {
		live := ordered[:0]
		for _, root := range ordered {
			q := pickFair(s, root, os)
			if q == nil {
				continue
			}
			if !s.admissionsLeft(admitted) {
				return decisions, admitted, true
			}
			o := os[q.Name]
			wl := o.peek()
			live = append(live, root)
			if held[q.Name] {
				o.pop(wl)
				deferTo(q, wl)
				continue
			}
			d, borrows := c.decide(s, q, wl, deferBorrowing)
			o.pop(wl)
			if borrows {
				held[q.Name] = true
				deferTo(q, wl)
				continue
			}
			decisions = append(decisions, d)
			admitted += countAdmission(&d)
		}
		ordered = live
	}
	return decisions, admitted, false
}

// cycle is what one scheduling cycle remembers between decisions.
type cycle struct {
	// blockedBy maps a StrictFIFO queue to the head that blocks it.
	blockedBy map[string]string
	// holding maps a queue to its highest-priority workload that waits for
	// room it may take by preemption (victims leaving, or room to come):
	// the room freed in the queue is its, and its queue's lower-priority
	// workloads, which would only become its victims, wait behind it.
	holding map[string]*core.Workload
	// reclaiming maps a cohort tree's root to the flavor-resources a
	// preemptor of this cycle takes back from other queues there: a second
	// preemptor short of the same ones would pick other victims for room
	// the first one's victims may already free, so it waits a cycle.
	reclaiming map[*quota.TreeNode]core.Usage
	// reserving maps a queue to the room held there for its starving
	// workload (reserve.go).
	reserving map[string]*reservation
	// failed maps a queue and workload shape to the outcome of the first
	// workload of that shape that did not fit: usage only grows during a
	// cycle, so later ones of the same shape and no higher priority fail
	// alike and are not evaluated again.
	failed map[shapeInQueue]failure
}

// shapeInQueue is a workload shape in a ClusterQueue, decided plainly or
// behind a reservation (as a backfill or not).
type shapeInQueue struct {
	queue, shape                string
	behindReservation, backfill bool
}

type failure struct {
	priority int32
	pending  core.Pending
	// starving says the workload that failed was starving, so no room
	// could be held for its shape either: a later starving one of the
	// same shape is not tried again for a reservation.
	starving bool
}

// decide admits the workload if it fits, plans preemption if it fits only
// that way, or says why it waits. With deferBorrowing, a workload that fits
// only by borrowing is left undecided (true is returned) for the second pass.
func (c *cycle) decide(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, deferBorrowing bool) (Decision, bool) {
	if why, barred := ineligible(s, q, wl); barred {
		return Decision{Workload: wl, Park: true, Pending: why}, false
	}
	if first, ok := s.blockedByPodsReady(); ok {
		return Decision{Workload: wl, Park: true, Pending: core.Pending{Kind: core.WaitingForPodsReady, Workloads: []string{first}}}, false
	}
	if p, ok := c.holding[q.Name]; ok && wl.Priority < p.Priority {
		return Decision{Workload: wl, Park: q.Strategy == core.BestEffortFIFO, Pending: core.Pending{
			Kind: core.BehindPreemptor, ClusterQueue: q.Name, Workloads: []string{p.Key}}}, false
	}
	if head, ok := c.blockedBy[q.Name]; ok {
		return Decision{Workload: wl, Pending: core.Pending{Kind: core.BlockedByHead, ClusterQueue: q.Name, Workloads: []string{head}}}, false
	}
	if r := c.reserving[q.Name]; r != nil {
		return c.decideBehind(s, q, wl, r, deferBorrowing)
	}
	class := shapeInQueue{queue: q.Name, shape: wl.ShapeKey()}
	if f, ok := c.failed[class]; ok && wl.Priority <= f.priority && (f.starving || !starving(s, q, wl)) {
		c.block(q, wl)
		return parkUntilStarving(s, q, wl, Decision{Workload: wl, Pending: f.pending, Park: q.Strategy == core.BestEffortFIFO}), false
	}
	adm, mode, noFit := Assign(s, q, wl)
	switch mode {
	case FitBorrow:
		if deferBorrowing {
			return Decision{}, true
		}
		fallthrough
	case Fit:
		return c.admit(s, q, wl, adm), false
	case FitPreempt:
		// Waiting the delay, holding the room, is worth it only when
		// preemption would find victims now (room comes as they finish,
		// or they go after the delay).
		if wait := preemptionWait(s, wl); wait > 0 && victimsExist(s, q, wl, adm) {
			// Waiting may be enough: what frees in its queue is kept for
			// it, and nobody is evicted if enough frees in time.
			return c.hold(q, wl, adm, Decision{Workload: wl, NeedsPreemption: true, RetryAfter: wait,
				Pending: core.Pending{Kind: core.WaitingToPreempt, Wait: wait, NoFit: noFit}}), false
		}
		if d, ok := c.preempt(s, q, wl, adm); ok {
			c.block(q, wl)
			c.holdRoom(q, wl, adm)
			return d, false
		}
		if part, partMode := AssignPartial(s, q, wl); part != nil {
			return c.admitPartial(s, q, wl, part, partMode, deferBorrowing)
		}
		if d, ok := c.reserveIfStarving(s, q, wl, noFit); ok {
			return d, false
		}
		if holdsWithoutVictims(q) && (noFit == nil || !noFit.PlacementOnly) {
			// No victims, and a borrower that took the room might never
			// be reclaimable: what is freed in its queue is kept for it.
			// It is not parked, so it holds the room every cycle.
			return c.hold(q, wl, adm, Decision{Workload: wl, Pending: core.Pending{Kind: core.NoQuota, NoFit: noFit}}), false
		}
	case Unfit:
		if part, partMode := AssignPartial(s, q, wl); part != nil {
			return c.admitPartial(s, q, wl, part, partMode, deferBorrowing)
		}
		if d, ok := c.reserveIfStarving(s, q, wl, noFit); ok {
			return d, false
		}
	}
	if noFit != nil {
		noFit.Shortfall = shortfallOf(s, q, wl)
	}
	c.block(q, wl)
	why := core.Pending{Kind: core.NoQuota, NoFit: noFit}
	c.failed[class] = failure{priority: wl.Priority, pending: why, starving: starving(s, q, wl)}
	return parkUntilStarving(s, q, wl, Decision{Workload: wl, Pending: why, Park: q.Strategy == core.BestEffortFIFO}), false
}

// admit takes the admission's quota and placements in the snapshot.
func (c *cycle) admit(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, adm *core.Admission) Decision {
	q.AddUsage(adm.Usage())
	s.CountDecayed(q, adm.Usage())
	s.CountLocalQueueAdmission(q, wl, adm.Usage())
	commitPlacements(s, adm)
	return Decision{Workload: wl, Admission: adm}
}

// admitPartial admits a workload with fewer pods than it asks; one that
// fits so only by borrowing waits for the second pass like any other.
func (c *cycle) admitPartial(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, adm *core.Admission, mode FitMode, deferBorrowing bool) (Decision, bool) {
	if mode == FitBorrow && deferBorrowing {
		return Decision{}, true
	}
	return c.admit(s, q, wl, adm), false
}

// preemptionWait is how much longer a workload that fits only by preempting
// holds its room before it may evict anyone: the snapshot's preemption
// delay from when it first needed to, or nothing once that has passed.
func preemptionWait(s *Snapshot, wl *core.Workload) time.Duration {
	if s.cfg.PreemptionDelay <= 0 || s.now.IsZero() {
		return 0
	}
	since := wl.NeedsPreemptionSince
	if since.IsZero() {
		since = s.now
	}
	return max(0, since.Add(s.cfg.PreemptionDelay).Sub(s.now))
}

// hold keeps the room a waiting preemptor needs for the rest of the cycle
// and returns its (unparked) decision.
func (c *cycle) hold(q *quota.QueueSnapshot, wl *core.Workload, adm *core.Admission, d Decision) Decision {
	c.holdRoom(q, wl, adm)
	c.block(q, wl)
	return d
}

// holdsWithoutVictims says whether room is held for a workload that needs
// preemption but has no victims: as in Kueue, when its queue cannot always take back
// what it lends (reclaimWithinCohort is not Any), since a borrower that took
// the room might never be reclaimable. Otherwise nothing is held: what is in
// its way may run for days, and idling its queue's free quota meanwhile
// would help nobody.
func holdsWithoutVictims(q *quota.QueueSnapshot) bool {
	return q.Preemption.ReclaimWithinCohort != core.PreemptAny
}

// preempt plans the preemption that lets wl fit and marks the victims in
// the snapshot so no later decision of the cycle picks them again. A
// preemptor short of what an earlier one of the cycle reclaims in its
// cohort tree waits instead.
func (c *cycle) preempt(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, adm *core.Admission) (Decision, bool) {
	root := q.Tree.Root()
	if taken := c.reclaiming[root]; len(taken) > 0 && overlapsUsage(shortfall(q, adm.Usage(), true), taken) {
		return Decision{Workload: wl, Pending: core.Pending{Kind: core.ReclaimInCohort, Cohort: root.Name}}, true
	}
	plan := planPreemption(s, q, wl, adm)
	park := q.Strategy == core.BestEffortFIFO
	if len(plan.waitFor) > 0 {
		return Decision{Workload: wl, Park: park, Pending: core.Pending{Kind: core.VictimsLeaving, Workloads: keys(plan.waitFor)}}, true
	}
	if len(plan.protected) > 0 {
		// Not parked: nothing is released when a minimum runtime passes;
		// the scheduler is woken then (RetryAfter).
		var ws []*core.Workload
		for _, v := range plan.protected {
			ws = append(ws, v.Workload)
		}
		return Decision{Workload: wl, RetryAfter: plan.protectedFor,
			Pending: core.Pending{Kind: core.VictimsInMinRuntime, Workloads: keys(ws), Wait: plan.protectedFor}}, true
	}
	if len(plan.victims) == 0 {
		return Decision{}, false
	}
	var ws []*core.Workload
	for _, v := range plan.victims {
		vq := s.Queue(v.Queue)
		marked := *v.Workload
		marked.Evicting = true
		vq.Workloads[marked.Key] = &marked
		ws = append(ws, v.Workload)
		if vq != q {
			c.markReclaimed(root, v.Workload)
		}
	}
	return Decision{Workload: wl, Victims: plan.victims, Park: park, Pending: core.Pending{Kind: core.Preempting, Workloads: keys(ws)}}, true
}

// markReclaimed records the flavor-resources taken back from another
// queue of the tree.
func (c *cycle) markReclaimed(root *quota.TreeNode, victim *core.Workload) {
	if c.reclaiming[root] == nil {
		c.reclaiming[root] = core.Usage{}
	}
	for fr, v := range victim.Admission.Usage() {
		c.reclaiming[root][fr] += v
	}
}

func overlapsUsage(a, b core.Usage) bool {
	for fr := range a {
		if _, ok := b[fr]; ok {
			return true
		}
	}
	return false
}

// localQueueStop is the stop policy of wl's LocalQueue. Few LocalQueues are
// ever stopped, so the cycle's every decision need not build a key to learn
// that.
func (s *Snapshot) localQueueStop(wl *core.Workload) core.StopPolicy {
	if len(s.StoppedLocalQueues) == 0 {
		return core.Running
	}
	return s.StoppedLocalQueues[core.LocalQueueKey(wl)]
}

// ineligible reports whether a workload may not use the queue at all right
// now, and why.
func ineligible(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload) (core.Pending, bool) {
	switch {
	case q.InactiveBecause != quota.Active:
		return core.Pending{Kind: core.QueueInactive, ClusterQueue: q.Name, Detail: q.Inactive}, true
	case s.localQueueStop(wl) != core.Running:
		return core.Pending{Kind: core.LocalQueueHeld, LocalQueue: wl.Queue}, true
	case q.NamespaceSelector == nil || !q.NamespaceSelector.Matches(wl.NamespaceLabels):
		return core.Pending{Kind: core.NamespaceNotSelected, Namespace: wl.Namespace, ClusterQueue: q.Name}, true
	}
	return core.Pending{}, false
}

// holdRoom keeps the room a preemptor is making for the rest of the cycle,
// so that what its victims free is not taken by a workload it outranks (which
// would only become its next victim): lower-priority workloads of its queue
// wait, and what it could take now of its queue's unused nominal quota is
// set aside from borrowers of the cohort. Only headroom under the nominal
// quota is set aside, so the queue never looks like a borrower to
// reclaiming preemptors.
func (c *cycle) holdRoom(q *quota.QueueSnapshot, wl *core.Workload, adm *core.Admission) {
	if p, ok := c.holding[q.Name]; !ok || wl.Priority > p.Priority {
		c.holding[q.Name] = wl
	}
	for fr, v := range holdable(q, adm.Usage()) {
		q.Tree.AddReserve(fr, v)
	}
}

// holdable is what of need a queue may set aside for a waiting workload:
// its unused nominal quota, but only what it could take now. That quota
// may be lent out, and setting aside room the cohort does not have would
// push the cohort's usage past its quota, so that a later preemptor of
// the cycle would evict for the held room as well as its own.
func holdable(q *quota.QueueSnapshot, need core.Usage) core.Usage {
	held := core.Usage{}
	for fr, v := range need {
		if room := min(q.Tree.Subtree[fr]-q.Tree.Usage[fr], q.Available(fr)); room > 0 {
			held[fr] = min(v, room)
		}
	}
	return held
}

func (c *cycle) block(q *quota.QueueSnapshot, wl *core.Workload) {
	if q.Strategy == core.StrictFIFO {
		c.blockedBy[q.Name] = wl.Key
	}
}

// drain evicts the admitted workloads of HoldAndDrain queues.
func drain(s *Snapshot) []Decision {
	var out []Decision
	for _, name := range slices.Sorted(maps.Keys(s.Queues)) {
		q := s.Queues[name]
		for _, w := range sortedWorkloads(q.Workloads) {
			if w.Evicting {
				continue
			}
			switch {
			case q.Stop == core.HoldAndDrain:
				out = append(out, Decision{Workload: w, Evict: ClusterQueueStopped})
			case s.localQueueStop(w) == core.HoldAndDrain:
				out = append(out, Decision{Workload: w, Evict: LocalQueueStopped})
			}
		}
	}
	return out
}

func sortedWorkloads(m map[string]*core.Workload) []*core.Workload {
	out := make([]*core.Workload, 0, len(m))
	for _, w := range m {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// keys lists the workloads' keys, sorted.
func keys(ws []*core.Workload) []string {
	ks := make([]string, 0, len(ws))
	for _, w := range ws {
		ks = append(ks, w.Key)
	}
	sort.Strings(ks)
	return ks
}
