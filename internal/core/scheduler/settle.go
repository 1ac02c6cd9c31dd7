package scheduler

import "time"

// DecisionKind is what a decision asks of whoever applies it.
type DecisionKind int

const (
	// Wait: the workload stays pending; Pending says why, Park whether it
	// is set aside until something changes.
	Wait DecisionKind = iota
	// Admit: reserve Admission for the pending workload.
	Admit
	// Repair: nodes of an admitted workload's placement failed (Lost);
	// Admission is its placement with them replaced.
	Repair
	// Evict: evict the admitted workload; Evict says why.
	Evict
	// Preempt: evict Victims so that the pending workload fits; it stays
	// pending until they have gone.
	Preempt
	// Place: a workload holding quota whose admission checks are Ready
	// gets the placement of its Delayed pod sets (Admission) and is
	// admitted; with Admission nil its nodes are not there yet
	// (EvictDetail says what is missing) and it waits, holding its quota.
	Place
)

// Kind is what the decision asks for. The fields that go with each kind
// are documented on Decision; Kind is the one place their combinations
// are read.
func (d *Decision) Kind() DecisionKind {
	switch {
	case d.Placing:
		return Place
	case d.Evict != NoEviction:
		return Evict
	case d.Admission != nil && d.Workload.Admission != nil:
		return Repair
	case d.Admission != nil:
		return Admit
	case len(d.Victims) > 0:
		return Preempt
	}
	return Wait
}

// Settle does the queue bookkeeping a decision of the cycle that Heads
// numbered seq asks for, once it has been applied, and returns how soon
// the scheduler must run again for it (0: nothing asks). It records when
// a workload first needed preemption (or that it no longer does), and sets
// aside a workload that stays pending (until RetryAfter when the wait alone
// changes what it is owed). The manager's scheduler and the simulator
// call it alike, so that what happens between two cycles is one copy.
func (t *Tracker) Settle(d *Decision, seq uint64, now time.Time) time.Duration {
	switch {
	case d.NeedsPreemption:
		t.Queues.NeedsPreemption(d.Workload.Key, now)
	case d.Kind() == Wait && !d.Workload.NeedsPreemptionSince.IsZero():
		t.Queues.NoLongerNeedsPreemption(d.Workload.Key)
	}
	if k := d.Kind(); k == Wait || k == Preempt {
		switch {
		case d.Park && d.RetryAfter > 0:
			t.Queues.ParkUntil(d.Workload, seq, now.Add(d.RetryAfter))
		case d.Park:
			t.Queues.Park(d.Workload, seq)
		}
	}
	return d.RetryAfter
}
