package scheduler

import (
	"sort"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
)

// PreemptionReason says why a victim is preempted. The controllers map it
// to the API's reason on the victim's Preempted condition.
type PreemptionReason string

const (
	// InClusterQueue: by a higher-priority (or older) workload of its
	// queue.
	InClusterQueue PreemptionReason = "InClusterQueue"
	// InCohortReclamation: its queue borrowed the quota a queue of its
	// cohort takes back.
	InCohortReclamation PreemptionReason = "InCohortReclamation"
	// InCohortReclaimWhileBorrowing: by a higher-priority workload of the
	// cohort that borrows itself (borrowWithinCohort).
	InCohortReclaimWhileBorrowing PreemptionReason = "InCohortReclaimWhileBorrowing"
	// InCohortFairSharing: its queue's share of the cohort is above the
	// preemptor's.
	InCohortFairSharing PreemptionReason = "InCohortFairSharing"
)

// Victim is an admitted workload to evict so a pending one fits.
type Victim struct {
	Workload *core.Workload
	Queue    string
	Reason   PreemptionReason
}

type candidate struct {
	wl    *core.Workload
	queue *quota.QueueSnapshot
	// reason is the preemption reason, empty when the policy forbids it.
	reason PreemptionReason
}

// preemptionPlan is what preemption can do for a workload that fits only
// by preempting: new victims, or workloads already being evicted to wait for.
type preemptionPlan struct {
	victims []Victim
	waitFor []*core.Workload
	// protected are victims that would do once their minimum runtime has
	// passed, the first of them in protectedFor.
	protected    []Victim
	protectedFor time.Duration
}

// planPreemption finds the smallest set of admitted workloads whose eviction
// lets wl fit with its assignment adm. It first counts workloads already
// being evicted as gone: if that is enough, wl waits for them. Then it tries
// without the preemptor borrowing (its own queue's lower-priority workloads
// and reclaiming lent quota from queues that borrow it), then, when
// borrowWithinCohort allows it, while borrowing. The snapshot is left as
// it was.
func planPreemption(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, adm *core.Admission) preemptionPlan {
	return searchPreemption(s, q, wl, adm, false)
}

// victimsExist is planPreemption asked only whether it would choose
// victims: a preemptor waiting its delay asks it every cycle, and any set
// that fits answers as well as the smallest, so none is made minimal.
func victimsExist(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, adm *core.Admission) bool {
	return len(searchPreemption(s, q, wl, adm, true).victims) > 0
}

// searchPreemption is planPreemption; with anySet the sets it finds are
// not made minimal (the same searches run, in the same order, so whether
// it finds victims, protected ones or none does not change).
func searchPreemption(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, adm *core.Admission, anySet bool) preemptionPlan {
	need := adm.Usage()
	tree := q.Tree.Root().Leaves()
	fc := newFitCheck(s, q, wl, adm)
	fc.anySet = anySet
	var evicting []candidate
	for _, l := range tree {
		for _, w := range l.Workloads {
			if w.Evicting && overlaps(w, need) {
				evicting = append(evicting, candidate{wl: w, queue: l})
			}
		}
	}
	fc.removeAll(evicting)
	defer fc.restoreAll(evicting)
	if fc.fits(true) {
		plan := preemptionPlan{}
		for _, c := range evicting {
			plan.waitFor = append(plan.waitFor, c.wl)
		}
		return plan
	}
	for _, borrow := range []bool{false, true} {
		short := shortfall(q, need, borrow)
		cands, protected := candidates(s, q, wl, need, short, tree, borrow)
		if victims := greedyMinimal(s, fc, short, cands, borrow); victims != nil {
			return preemptionPlan{victims: victims}
		}
		if len(protected) == 0 {
			continue
		}
		if victims := greedyMinimal(s, fc, short, append(cands, protected...), borrow); victims != nil {
			return preemptionPlan{protected: victims, protectedFor: firstUnprotected(s, victims)}
		}
	}
	return preemptionPlan{}
}

// protectedFor is how much longer an admitted workload of queue l may not
// be preempted (the larger of its queue's and its priority class's minimum
// runtime), 0 if it may now.
func protectedFor(s *Snapshot, l *quota.QueueSnapshot, w *core.Workload) time.Duration {
	minRuntime := max(l.Preemption.MinRuntime, s.ClassMinRuntime[w.PriorityClass])
	if minRuntime <= 0 || w.AdmittedAt.IsZero() || s.now.IsZero() {
		return 0
	}
	return max(0, w.AdmittedAt.Add(minRuntime).Sub(s.now))
}

// firstUnprotected is when the first protected victim's minimum runtime
// ends.
func firstUnprotected(s *Snapshot, victims []Victim) time.Duration {
	var first time.Duration
	for _, v := range victims {
		if d := protectedFor(s, s.Queue(v.Queue), v.Workload); d > 0 && (first == 0 || d < first) {
			first = d
		}
	}
	return first
}

// shortfall is the part of need that does not fit the queue now: the
// flavor-resources preemption must free. Only workloads using them can
// help, and only queues borrowing them may be reclaimed from.
func shortfall(q *quota.QueueSnapshot, need core.Usage, borrow bool) core.Usage {
	out := core.Usage{}
	if len(need) > 0 && fitsAfter(q, need, borrow) {
		// Only the placement is short: whoever uses the flavors may help.
		for fr, v := range need {
			out[fr] = v
		}
		return out
	}
	for fr, v := range need {
		if v > q.Available(fr) || (!borrow && q.Tree.Usage[fr]+v > q.Nominal(fr)) {
			out[fr] = v
		}
	}
	return out
}

// candidates lists the workloads the queue's policies allow wl to preempt,
// among those using a flavor-resource in short, in the order they should
// go: other queues' first (reclaim; under fair sharing the highest share
// first), then lower priority, then the most recently admitted. Those
// within their queue's minimum runtime are listed apart, in the same
// order: they are never victims, but say what the preemptor waits for.
func candidates(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, need, short core.Usage, tree []*quota.QueueSnapshot, borrow bool) (out, protected []candidate) {
	for _, l := range tree {
		for _, w := range l.Workloads {
			if w.Evicting || !overlaps(w, short) {
				continue
			}
			c := candidate{wl: w, queue: l}
			if l == q {
				if allowed(q.Preemption.WithinClusterQueue, wl, w) {
					c.reason = InClusterQueue
				}
			} else {
				c.reason = reclaimReason(s, q, wl, w, need, borrow)
			}
			switch {
			case c.reason == "":
			case protectedFor(s, l, w) > 0:
				protected = append(protected, c)
			default:
				out = append(out, c)
			}
		}
	}
	sortCandidates(s, q, out)
	sortCandidates(s, q, protected)
	return out, protected
}

// sortCandidates sorts candidates in the order they should go.
func sortCandidates(s *Snapshot, q *quota.QueueSnapshot, out []candidate) {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.queue == q) != (b.queue == q) {
			return b.queue == q
		}
		if s.cfg.FairSharing && a.queue != b.queue && a.queue != q && b.queue != q {
			if sa, sb := a.queue.Tree.Share(), b.queue.Tree.Share(); sa != sb {
				return sa > sb
			}
		}
		if a.wl.Priority != b.wl.Priority {
			return a.wl.Priority < b.wl.Priority
		}
		if !a.wl.AdmittedAt.Equal(b.wl.AdmittedAt) {
			return a.wl.AdmittedAt.After(b.wl.AdmittedAt)
		}
		if !a.wl.Created.Equal(b.wl.Created) {
			return a.wl.Created.After(b.wl.Created)
		}
		return a.wl.Key > b.wl.Key
	})
}

// withinNominal reports whether need fits the queue's nominal quota on top
// of what it uses.
func withinNominal(q *quota.QueueSnapshot, need core.Usage) bool {
	for fr, v := range need {
		if q.Tree.Usage[fr]+v > q.Nominal(fr) {
			return false
		}
	}
	return true
}

// reclaimReason says why wl may take quota back from workload w of another
// queue, or "" if it may not.
func reclaimReason(s *Snapshot, q *quota.QueueSnapshot, wl, w *core.Workload, need core.Usage, borrow bool) PreemptionReason {
	p := q.Preemption
	switch {
	case s.cfg.FairSharing && allowed(p.ReclaimWithinCohort, wl, w):
		// The reclaim policy's priority filter holds under fair sharing
		// too: LowerPriority never takes from a higher-priority workload.
		// Taking back what the preemptor's nominal quota entitles it to is
		// reclamation, as Kueue reports it; beyond that it is fair sharing.
		if !borrow && withinNominal(q, need) {
			return InCohortReclamation
		}
		return InCohortFairSharing
	case !borrow && allowed(p.ReclaimWithinCohort, wl, w):
		return InCohortReclamation
	case borrow && p.BorrowWithinCohort == core.PreemptLowerPriority && w.Priority < wl.Priority &&
		(p.MaxPriorityThreshold == nil || w.Priority <= *p.MaxPriorityThreshold):
		return InCohortReclaimWhileBorrowing
	}
	return ""
}

// allowed applies a preemption policy to a preemptor and a candidate.
func allowed(p core.PreemptionPolicy, preemptor, victim *core.Workload) bool {
	switch p {
	case core.PreemptLowerPriority:
		return victim.Priority < preemptor.Priority
	case core.PreemptLowerOrNewerEqualPriority:
		return victim.Priority < preemptor.Priority ||
			(victim.Priority == preemptor.Priority && victim.Created.After(preemptor.Created))
	case core.PreemptAny:
		return true
	}
	return false
}

// greedyMinimal removes candidates in order until the workload fits, then
// (unless the search asks for any set) puts back, newest choice first,
// each one it can do without. Candidates of
// other queues are taken only while their queue still borrows what is
// needed (reclaim never goes below a queue's nominal quota) and, under fair
// sharing, only while their queue's share is above what the preemptor's
// would be. It returns nil if no set of candidates is enough.
func greedyMinimal(s *Snapshot, fc *fitCheck, short core.Usage, cands []candidate, borrow bool) []Victim {
	q, need := fc.q, fc.need
	var taken []candidate
	fits := false
	for _, c := range cands {
		if c.queue != q && !mayReclaimFrom(s, q, c.queue, need, short) {
			continue
		}
		fc.remove(c)
		taken = append(taken, c)
		if fc.fits(borrow) {
			fits = true
			break
		}
	}
	if !fits {
		fc.restoreAll(taken)
		return nil
	}
	if !fc.anySet {
		taken = putBackUnneeded(fc, taken, borrow)
	}
	fc.restoreAll(taken)
	victims := make([]Victim, 0, len(taken))
	for _, c := range taken {
		victims = append(victims, Victim{Workload: c.wl, Queue: c.queue.Name, Reason: c.reason})
	}
	return victims
}

// putBackUnneeded puts back, newest choice first, each taken candidate the
// workload still fits without, and returns those it needs.
func putBackUnneeded(fc *fitCheck, taken []candidate, borrow bool) []candidate {
	for i := len(taken) - 2; i >= 0; i-- {
		c := taken[i]
		fc.restore(c)
		if fc.fits(borrow) {
			taken = append(taken[:i], taken[i+1:]...)
			continue
		}
		fc.remove(c)
	}
	return taken
}

// mayReclaimFrom says whether quota may still be taken from another queue:
// it must borrow a flavor-resource the preemptor is short of, and so must
// every cohort between it and the cohort it shares with the preemptor (a
// queue borrowing only from its own sub-cohort, which stays within its
// quota, uses nothing of the preemptor's); under fair sharing its share
// must stay above the preemptor's once the preemptor is admitted, and,
// with usage decay, when the preemptor would borrow, the tournament must
// not favour it over the preemptor: it would hand it the room back next
// cycle, to be preempted again.
func mayReclaimFrom(s *Snapshot, q, from *quota.QueueSnapshot, need, short core.Usage) bool {
	borrowing := false
	for fr := range short {
		if borrowsUpTo(from.Tree, commonAncestor(q.Tree, from.Tree), fr) {
			borrowing = true
			break
		}
	}
	if !borrowing || !s.cfg.FairSharing {
		return borrowing
	}
	q.AddUsage(need)
	after := q.Tree.Share()
	q.RemoveUsage(need)
	// A preemptor that stays within its nominal quota (share 0) takes back
	// what is guaranteed to it whatever its queue ran in the past; only a
	// borrowing one defers to the tournament's decayed order.
	if after > 0 && s.FairShare(from.Tree) < s.FairShare(q.Tree) {
		return false
	}
	return from.Tree.Share() > after
}

// borrowsUpTo reports whether n and each of its ancestors below top use
// more of fr than their subtree's quota, room held this cycle aside.
func borrowsUpTo(n, top *quota.TreeNode, fr core.FlavorResource) bool {
	for ; n != nil && n != top; n = n.Parent {
		if !n.Borrowing(fr) {
			return false
		}
	}
	return true
}

// commonAncestor is the lowest cohort above both nodes (nil if none).
func commonAncestor(a, b *quota.TreeNode) *quota.TreeNode {
	above := map[*quota.TreeNode]bool{}
	for n := a.Parent; n != nil; n = n.Parent {
		above[n] = true
	}
	for n := b.Parent; n != nil; n = n.Parent {
		if above[n] {
			return n
		}
	}
	return nil
}

// fitsAfter reports whether need fits the queue now, without borrowing
// unless allowed.
func fitsAfter(q *quota.QueueSnapshot, need core.Usage, borrow bool) bool {
	for fr, v := range need {
		if v > q.Available(fr) {
			return false
		}
		if !borrow && q.Tree.Usage[fr]+v > q.Nominal(fr) {
			return false
		}
	}
	return true
}

func overlaps(w *core.Workload, need core.Usage) bool {
	for fr := range w.Admission.Usage() {
		if _, ok := need[fr]; ok {
			return true
		}
	}
	return false
}
