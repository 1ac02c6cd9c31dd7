package scheduler

import (
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
)

// Explanation is the scheduler's own search run for one pending workload on
// a snapshot, as a cycle that tried it first would run it: how it fits, and
// when it fits only by preempting, what preemption would do. It is what a
// user asking "why does my job wait" is told, instead of a guess rebuilt
// from status that lags.
type Explanation struct {
	// Fit is how the workload fits now (its best flavors).
	Fit FitMode
	// NoFit says which flavors and resources are short, and by how much,
	// when it does not fit without preempting.
	NoFit *core.NoFit
	// Victims are the admitted workloads preemption would evict now, with
	// why each may go.
	Victims []Victim
	// WaitFor are workloads already being evicted whose quota is enough:
	// it waits for them, evicting no one else.
	WaitFor []*core.Workload
	// Protected would be the victims once their minimum runtime passes,
	// the first of them in ProtectedFor.
	Protected    []Victim
	ProtectedFor time.Duration
	// PreemptionWait is how much longer it holds its room before it may
	// evict anyone (waitForPreemption delay), in case enough frees.
	PreemptionWait time.Duration
	// Candidates counts the admitted workloads holding what it lacks, and
	// Allowed those of them its queue's preemption policy lets it take:
	// when there are no victims, they say whether the policy or the
	// amounts stand in the way.
	Candidates, Allowed int
	// NeverPreempts is true when its ClusterQueue preempts nothing at all.
	NeverPreempts bool
}

// Explain runs the search for a pending workload of a ClusterQueue, false
// if the snapshot has no such queue. Within a cycle what earlier decisions
// of the cycle took also counts; Explain sees only the admitted
// workloads. The snapshot is left as it was.
func Explain(s *Snapshot, clusterQueue string, wl *core.Workload) (Explanation, bool) {
	q := s.Queue(clusterQueue)
	if q == nil {
		return Explanation{}, false
	}
	adm, mode, noFit := Assign(s, q, wl)
	e := Explanation{Fit: mode, NoFit: noFit, NeverPreempts: neverPreempts(q.Preemption)}
	if mode == Unfit && noFit != nil {
		noFit.Shortfall = shortfallOf(s, q, wl)
	}
	if mode != FitPreempt {
		return e, true
	}
	plan := planPreemption(s, q, wl, adm)
	e.Victims, e.WaitFor, e.Protected, e.ProtectedFor = plan.victims, plan.waitFor, plan.protected, plan.protectedFor
	if len(plan.victims) > 0 {
		e.PreemptionWait = preemptionWait(s, wl)
	}
	e.Candidates, e.Allowed = countCandidates(s, q, wl, adm.Usage())
	return e, true
}

// neverPreempts says whether a queue's policy forbids every preemption.
func neverPreempts(p core.Preemption) bool {
	return p.WithinClusterQueue == core.PreemptNever && p.ReclaimWithinCohort == core.PreemptNever && p.BorrowWithinCohort == core.PreemptNever
}

// countCandidates counts the admitted workloads in the cohort tree that
// hold what wl lacks (borrowing allowed), and those its policy may take.
func countCandidates(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, need core.Usage) (holding, allowed int) {
	short, tree := shortfall(q, need, true), q.Tree.Root().Leaves()
	for _, l := range tree {
		for _, w := range l.Workloads {
			if !w.Evicting && overlaps(w, short) {
				holding++
			}
		}
	}
	out, protected := candidates(s, q, wl, need, short, tree, true)
	return holding, len(out) + len(protected)
}
