package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// PendingKind is why a workload stays pending.
type PendingKind int

const (
	// NotPending: the decision admits or evicts.
	NotPending PendingKind = iota
	// QueueInactive: its ClusterQueue admits nothing (Detail says why).
	QueueInactive
	// LocalQueueStopped: its LocalQueue is stopped.
	LocalQueueHeld
	// NamespaceNotSelected: the ClusterQueue's namespaceSelector does not
	// select its Namespace.
	NamespaceNotSelected
	// WaitingForPodsReady: blockAdmission waits for the pods of an
	// admitted workload (Workloads[0]).
	WaitingForPodsReady
	// BehindPreemptor: a higher-priority workload of its queue
	// (Workloads[0]) waits for room there.
	BehindPreemptor
	// BlockedByHead: the head of its StrictFIFO queue (Workloads[0]) does
	// not fit.
	BlockedByHead
	// NoQuota: it does not fit (NoFit says where).
	NoQuota
	// WaitingToPreempt: it fits only by preempting and holds its room for
	// up to Wait first, in case enough frees by itself.
	WaitingToPreempt
	// ReclaimInCohort: another workload takes back quota in Cohort this
	// cycle.
	ReclaimInCohort
	// VictimsLeaving: the workloads evicted for it (Workloads) have not
	// released their quota yet.
	VictimsLeaving
	// Preempting: it evicts Workloads to make room.
	Preempting
	// EvictionRetry: its victims (Workloads) could not be evicted yet; the
	// scheduler tries again shortly.
	EvictionRetry
	// VictimsInMinRuntime: it fits only by preempting Workloads that have
	// not run their queue's minimum runtime; the first may go in Wait.
	VictimsInMinRuntime
	// Reserved: it does not fit, has waited longer than its queue's
	// starvation threshold (Wait), and room is held for it in ClusterQueue;
	// By is when enough should be free (zero: not known).
	Reserved
	// BehindReservation: room in ClusterQueue is held for the starving
	// Workloads[0]; only a workload bounded to end by By may use it.
	BehindReservation
)

// BehindStarvingPrefix begins the message of a workload that waits behind
// room held for a starving one (BehindReservation), for readers of the
// message such as kubectl muster why.
const BehindStarvingPrefix = "waiting behind starving workload"

// Pending is why a workload waits, as structure: the reason writer
// compares it (a reason that only changed its amounts is not worth a write
// every cycle) and formats it only when it writes.
type Pending struct {
	Kind PendingKind
	// ClusterQueue, LocalQueue, Namespace and Cohort name what the reason
	// is about, when it is about one.
	ClusterQueue, LocalQueue, Namespace, Cohort string
	// Detail is the cause in words of an inactive queue.
	Detail string
	// Workloads are the keys of the workloads in the way, or the victims.
	Workloads []string
	// Wait is how long a preemptor holds its room at most, or how long a
	// workload waits before room is held for it.
	Wait time.Duration
	// By is when the room held for a starving workload should be enough.
	By time.Time
	// NoFit says which flavors and resources are short, and by how much.
	NoFit *NoFit
}

// Message is the text users read in the workload's QuotaReserved
// condition.
func (p *Pending) Message() string {
	first := ""
	if len(p.Workloads) > 0 {
		first = p.Workloads[0]
	}
	switch p.Kind {
	case QueueInactive:
		return fmt.Sprintf("ClusterQueue %s is inactive: %s", p.ClusterQueue, p.Detail)
	case LocalQueueHeld:
		return fmt.Sprintf("LocalQueue %s is stopped", p.LocalQueue)
	case NamespaceNotSelected:
		return fmt.Sprintf("namespace %s is not selected by the namespaceSelector of ClusterQueue %s", p.Namespace, p.ClusterQueue)
	case WaitingForPodsReady:
		return fmt.Sprintf("waiting for the pods of admitted workload %s to be ready (waitForPodsReady.blockAdmission)", first)
	case BehindPreemptor:
		return fmt.Sprintf("waiting behind higher-priority workload %s, which is waiting for room in ClusterQueue %s", first, p.ClusterQueue)
	case BlockedByHead:
		return fmt.Sprintf("blocked by workload %s at the head of StrictFIFO ClusterQueue %s", first, p.ClusterQueue)
	case NoQuota:
		return "waiting for quota: " + p.NoFit.Message()
	case WaitingToPreempt:
		return fmt.Sprintf("waiting for quota to free before preempting (%s at most): %s", p.Wait.Round(time.Second), p.NoFit.Message())
	case ReclaimInCohort:
		return fmt.Sprintf("waiting for preemption: another workload is taking back quota in cohort %s this cycle", p.Cohort)
	case VictimsInMinRuntime:
		return fmt.Sprintf("waiting for preemption: %d workload(s) to preempt have not run their minimum runtime (%s); the first may be preempted in %s",
			len(p.Workloads), strings.Join(p.Workloads, ", "), p.Wait.Round(time.Second))
	case VictimsLeaving:
		return fmt.Sprintf("waiting for preemption: %d workload(s) being evicted to make room (%s)", len(p.Workloads), strings.Join(p.Workloads, ", "))
	case Preempting:
		return fmt.Sprintf("waiting for preemption: evicting %d workload(s) to make room (%s)", len(p.Workloads), strings.Join(p.Workloads, ", "))
	case Reserved:
		return fmt.Sprintf("waiting for quota, with room held for it in ClusterQueue %s since it has waited longer than %s (starvation.afterSeconds): %s; %s",
			p.ClusterQueue, p.Wait.Round(time.Second), p.NoFit.Message(), completion(p.By, p.Detail))
	case BehindReservation:
		if p.By.IsZero() {
			return fmt.Sprintf(BehindStarvingPrefix+" %s, for which room is held in ClusterQueue %s; no job can be shown to finish before it fits (%s), so none may use the held room%s",
				first, p.ClusterQueue, p.Detail, yieldsAfter(p.Wait))
		}
		return fmt.Sprintf(BehindStarvingPrefix+" %s, for which room is held in ClusterQueue %s; only a job whose maximum execution time ends by %s may use the held room meanwhile%s",
			first, p.ClusterQueue, p.By.UTC().Format(time.RFC3339), yieldsAfter(p.Wait))
	case EvictionRetry:
		return fmt.Sprintf("preemption in progress: could not evict %s yet (%s); retrying",
			strings.Join(p.Workloads, ", "), "the victim's admission is still being written, or it changed")
	}
	return ""
}

// yieldsAfter says when the held room yields to a workload behind it.
func yieldsAfter(yield time.Duration) string {
	if yield <= 0 {
		return ""
	}
	return fmt.Sprintf(", or one that has waited %s (starvation.yieldAfterSeconds)", yield.Round(time.Second))
}

// completion says when the room held for a starving workload should be
// enough.
func completion(by time.Time, why string) string {
	if by.IsZero() {
		return "when is not known: " + why
	}
	return "enough should be free by " + by.UTC().Format(time.RFC3339)
}

// Equal reports whether two reasons say the same, amounts included.
func (p *Pending) Equal(o *Pending) bool {
	return p.sameSubject(o) && p.Wait == o.Wait && p.By.Equal(o.By) && p.NoFit.equal(o.NoFit)
}

// SameButAmounts reports whether two reasons differ at most in their
// amounts: the same kind about the same objects, short of the same
// resources in the same flavors. Available quota moves with every
// admission; such a change is not a new reason.
func (p *Pending) SameButAmounts(o *Pending) bool {
	return p.sameSubject(o) && p.NoFit.sameShortfalls(o.NoFit)
}

func (p *Pending) sameSubject(o *Pending) bool {
	return p.Kind == o.Kind && p.ClusterQueue == o.ClusterQueue && p.LocalQueue == o.LocalQueue &&
		p.Namespace == o.Namespace && p.Cohort == o.Cohort && p.Detail == o.Detail && slices.Equal(p.Workloads, o.Workloads)
}

func (n *NoFit) equal(o *NoFit) bool {
	if n == nil || o == nil {
		return n == o
	}
	return n.PodSet == o.PodSet && n.Never == o.Never && slices.Equal(n.Reasons, o.Reasons) && maps.Equal(n.Totals, o.Totals) &&
		(n.Shortfall == nil) == (o.Shortfall == nil) && (n.Shortfall == nil || *n.Shortfall == *o.Shortfall)
}

// sameShortfalls reports whether two explanations reject the same flavors
// for the same reasons, whatever the amounts.
func (n *NoFit) sameShortfalls(o *NoFit) bool {
	if n == nil || o == nil {
		return n == o
	}
	if n.PodSet != o.PodSet || n.Never != o.Never || len(n.Reasons) != len(o.Reasons) || len(n.Totals) != len(o.Totals) ||
		(n.Shortfall == nil) != (o.Shortfall == nil) {
		return false
	}
	for i, r := range n.Reasons {
		if q := o.Reasons[i]; r.Text != q.Text || r.Resource != q.Resource || r.Flavor != q.Flavor || r.Never != q.Never {
			return false
		}
	}
	for res := range n.Totals {
		if _, ok := o.Totals[res]; !ok {
			return false
		}
	}
	return true
}
