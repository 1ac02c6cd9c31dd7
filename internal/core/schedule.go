package core

import (
	"fmt"
	"sort"
)

// Decision is the outcome of one scheduling attempt for one workload.
type Decision struct {
	Workload *Workload
	// Admission is the quota to reserve; nil when the workload stays pending.
	Admission *Admission
	// Message says why the workload stays pending.
	Message string
	// Park is true when the workload should not be retried until something
	// changes (BestEffortFIFO, or an inactive queue).
	Park bool
}

// Schedule runs one admission cycle over a snapshot: it tries every pending
// workload of every ClusterQueue, highest priority and oldest first across
// queues, and admits each that fits. What it admits is added to the
// snapshot's usage, so the decisions of one cycle never oversubscribe quota
// together. Under StrictFIFO a queue stops at the first workload that does
// not fit; under BestEffortFIFO later workloads may pass it.
func Schedule(s *Snapshot, heads map[string][]*Workload) []Decision {
	type entry struct {
		cq string
		wl *Workload
	}
	var entries []entry
	for cq, wls := range heads {
		for _, wl := range wls {
			entries = append(entries, entry{cq: cq, wl: wl})
		}
	}
	sort.Slice(entries, func(i, j int) bool { return before(entries[i].wl, entries[j].wl) })

	blockedBy := map[string]string{}
	decisions := make([]Decision, 0, len(entries))
	for _, e := range entries {
		q := s.Queue(e.cq)
		if q == nil {
			continue
		}
		decisions = append(decisions, decide(s, q, e.wl, blockedBy))
	}
	return decisions
}

func decide(s *Snapshot, q *QueueSnapshot, wl *Workload, blockedBy map[string]string) Decision {
	if q.Inactive != "" {
		return Decision{Workload: wl, Park: true, Message: fmt.Sprintf("ClusterQueue %s is inactive: %s", q.Name, q.Inactive)}
	}
	if head, ok := blockedBy[q.Name]; ok {
		return Decision{Workload: wl, Message: fmt.Sprintf("waiting behind workload %s at the head of StrictFIFO ClusterQueue %s", head, q.Name)}
	}
	adm, noFit := Assign(s, q, wl)
	if noFit != nil {
		if q.Strategy == StrictFIFO {
			blockedBy[q.Name] = wl.Key
		}
		return Decision{Workload: wl, Message: noFit.Message(), Park: q.Strategy == BestEffortFIFO}
	}
	q.AddUsage(adm.Usage())
	return Decision{Workload: wl, Admission: adm}
}
