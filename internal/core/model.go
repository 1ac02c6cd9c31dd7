package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// FlavorResource names one resource of one flavor: the unit quota is kept in.
type FlavorResource struct {
	Flavor   string
	Resource string
}

// Amounts of resources are int64s in the resource's own unit: milli-cores
// for cpu, the only resource quoted in fractions of a unit, and whole units
// (bytes, devices, pods) for every other. Milli-units throughout would
// overflow int64 above ~8 PiB, which a cohort's memory total can reach.
// MilliUnits says which unit a resource is counted in.
func MilliUnits(res string) bool { return res == "cpu" }

// Usage is an amount per flavor and resource.
type Usage map[FlavorResource]int64

// Add adds o to u.
func (u Usage) Add(o Usage) {
	for fr, v := range o {
		u[fr] += v
	}
}

// Sub subtracts o from u, dropping entries that reach zero.
func (u Usage) Sub(o Usage) {
	for fr, v := range o {
		if u[fr] -= v; u[fr] == 0 {
			delete(u, fr)
		}
	}
}

// Clone returns a copy of u.
func (u Usage) Clone() Usage {
	c := make(Usage, len(u))
	for fr, v := range u {
		c[fr] = v
	}
	return c
}

// Requests is an amount per resource.
type Requests map[string]int64

// Scaled returns r multiplied by n.
func (r Requests) Scaled(n int32) Requests {
	s := make(Requests, len(r))
	for name, v := range r {
		s[name] = v * int64(n)
	}
	return s
}

// Taint is a node taint of a flavor.
type Taint struct {
	Key, Value, Effect string
}

// Toleration tolerates taints, as in a pod spec.
type Toleration struct {
	Key, Operator, Value, Effect string
}

// Flavor is a kind of node.
type Flavor struct {
	Name        string
	NodeLabels  map[string]string
	Taints      []Taint
	Tolerations []Toleration
	// Topology names the flavor's Topology: its pod sets are admitted only
	// where their pods can be placed (see PlacePodSets).
	Topology string
	// Pinned: its pods are sent to the nodes their placement counted
	// (a Topology, or node fit Pin). A pod set placed whole on one node is
	// then pinned through its job's template, which a running job cannot
	// change: its placement is not repaired but the job requeued whole.
	Pinned bool
}

// ResourceQuota is the quota of one resource of one flavor.
type ResourceQuota struct {
	Nominal int64
	// BorrowingLimit caps usage above Nominal; nil means no cap.
	BorrowingLimit *int64
	// LendingLimit caps how much of Nominal others may use; nil means all.
	LendingLimit *int64
}

// FlavorQuotas is the quota of the covered resources of one flavor.
type FlavorQuotas struct {
	Flavor    string
	Resources map[string]ResourceQuota
}

// ResourceGroup is a set of resources assigned one flavor together, and the
// flavors to try, in order.
type ResourceGroup struct {
	Resources []string
	Flavors   []FlavorQuotas
}

// QueueingStrategy orders a ClusterQueue's pending workloads.
type QueueingStrategy int

const (
	// BestEffortFIFO lets later workloads pass one that does not fit.
	BestEffortFIFO QueueingStrategy = iota
	// StrictFIFO blocks the queue behind a head that does not fit.
	StrictFIFO
)

// StopPolicy stops a ClusterQueue.
type StopPolicy int

const (
	// Running admits normally.
	Running StopPolicy = iota
	// Hold admits nothing new.
	Hold
	// HoldAndDrain admits nothing and evicts what is admitted.
	HoldAndDrain
)

// PreemptionPolicy says which workloads a pending one may preempt.
type PreemptionPolicy int

const (
	// PreemptNever never preempts.
	PreemptNever PreemptionPolicy = iota
	// PreemptLowerPriority preempts workloads of lower priority.
	PreemptLowerPriority
	// PreemptLowerOrNewerEqualPriority also preempts newer workloads of
	// equal priority.
	PreemptLowerOrNewerEqualPriority
	// PreemptAny preempts any workload (reclaim only).
	PreemptAny
)

// Preemption is a ClusterQueue's preemption policy.
type Preemption struct {
	WithinClusterQueue PreemptionPolicy
	// ReclaimWithinCohort takes back lent quota from queues that borrow it.
	ReclaimWithinCohort PreemptionPolicy
	// BorrowWithinCohort lets a workload that must borrow preempt
	// lower-priority workloads of other queues (PreemptNever or
	// PreemptLowerPriority), up to MaxPriorityThreshold when set.
	BorrowWithinCohort   PreemptionPolicy
	MaxPriorityThreshold *int32
	// MinRuntime is how long the queue's admitted workloads run before
	// they may be preempted (or reclaimed from): they may still be evicted
	// by a drain or a deactivation.
	MinRuntime time.Duration
}

// Preempts reports whether the policy lets the queue's workloads preempt
// at all; a minimum runtime alone does not.
func (p Preemption) Preempts() bool {
	return p.WithinClusterQueue != PreemptNever || p.ReclaimWithinCohort != PreemptNever || p.BorrowWithinCohort != PreemptNever
}

// FlavorFungibility says whether to stop at a flavor that fits only by
// borrowing or preempting.
type FlavorFungibility struct {
	// StopAtBorrow: stop at a flavor that fits by borrowing (Kueue's Borrow);
	// false tries the next flavor first (TryNextFlavor).
	StopAtBorrow bool
	// StopAtPreempt: stop at a flavor that fits by preempting (Preempt);
	// false tries the next flavor first (TryNextFlavor).
	StopAtPreempt bool
}

// Selector matches a namespace's labels.
type Selector interface {
	Matches(labels map[string]string) bool
}

// ClusterQueue is the part of a ClusterQueue's spec the core needs.
type ClusterQueue struct {
	Name           string
	Cohort         string
	ResourceGroups []ResourceGroup
	Strategy       QueueingStrategy
	Stop           StopPolicy
	Preemption     Preemption
	Fungibility    FlavorFungibility
	// Weight is the fair-sharing weight in milli-units (1000 = 1).
	Weight int64
	// NamespaceSelector selects the namespaces that may use the queue; nil
	// selects none.
	NamespaceSelector Selector
	// Gang is the gang scheduler its admitted jobs are handed to ("" or
	// "None": none); a queue whose gang scheduler is not installed admits
	// nothing.
	Gang string
	// StarvationAfter is how long a pending workload waits before room is
	// held for it (see reserve.go); zero never holds any.
	StarvationAfter time.Duration
	// StarvationYieldAfter bounds what held room may cost the workloads
	// behind it: one that has waited this long may use the held room as a
	// backfill would. Zero: only bounded backfills may.
	StarvationYieldAfter time.Duration
	// MaxRuntime is the runtime bound of the queue's workloads that declare
	// none: a workload admitted longer is deactivated. Zero: unbounded.
	MaxRuntime time.Duration
	// AdmissionFairSharing orders the queue's pending workloads by their
	// LocalQueue's usage first (lqfair.go).
	AdmissionFairSharing bool
	// Checks are the queue's admission checks: a reservation on a flavor a
	// check applies to waits for it before its job runs.
	Checks []CheckRule
}

// CheckRule is one admission check of a ClusterQueue and the flavors it
// applies to (none: all).
type CheckRule struct {
	Name      string
	OnFlavors []string
}

// AppliesTo reports whether the check applies to a flavor.
func (r CheckRule) AppliesTo(flavor string) bool {
	return len(r.OnFlavors) == 0 || slices.Contains(r.OnFlavors, flavor)
}

// ChecksFor names, in the queue's order, the checks that apply to an
// admission: those that apply to one of the flavors it takes.
func (cq *ClusterQueue) ChecksFor(adm *Admission) []string {
	var out []string
	for _, r := range cq.Checks {
		if adm.TakesAny(r.AppliesTo) {
			out = append(out, r.Name)
		}
	}
	return out
}

// TakesAny reports whether the admission takes a flavor the predicate
// accepts.
func (a *Admission) TakesAny(accept func(flavor string) bool) bool {
	for _, ps := range a.PodSets {
		for _, f := range ps.Flavors {
			if accept(f) {
				return true
			}
		}
	}
	return false
}

// Cohort is a node of the cohort tree: a parent, quota of its own, a weight.
type Cohort struct {
	Name           string
	Parent         string
	ResourceGroups []ResourceGroup
	// Weight is the fair-sharing weight in milli-units (1000 = 1).
	Weight int64
}

// FlavorNames lists the flavors the queue refers to.
func (cq *ClusterQueue) FlavorNames() []string {
	var names []string
	for _, g := range cq.ResourceGroups {
		for _, f := range g.Flavors {
			names = append(names, f.Flavor)
		}
	}
	return names
}

// PodSet is a group of identical pods of a workload.
type PodSet struct {
	Name  string
	Count int32
	// MinCount, when set below Count, is the fewest pods the pod set may
	// be admitted with (partial admission).
	MinCount int32
	// Requests are per pod.
	Requests     Requests
	NodeSelector map[string]string
	Tolerations  []Toleration
	// Affinity is the pods' required node affinity: a node must match one
	// of the terms. Only topology placement evaluates it.
	Affinity []NodeSelectorTerm
	// Topology is how the pods must sit in the flavor's topology; nil on a
	// topology flavor places them unconstrained.
	Topology *TopologyRequest
}

// Workload is a job as the core sees it.
type Workload struct {
	// Key is namespace/name; it identifies the workload everywhere.
	Key       string
	Namespace string
	Name      string
	// Queue is the LocalQueue's name, in Namespace.
	Queue    string
	Priority int32
	Created  time.Time
	PodSets  []PodSet
	// ResourceVersion is the version of the object the core's view was
	// taken from; an admission is written only onto that version.
	ResourceVersion string
	// NamespaceLabels are the labels of the workload's namespace, matched
	// against a ClusterQueue's namespaceSelector.
	NamespaceLabels map[string]string
	// Admission is set while the workload holds quota.
	Admission *Admission
	// PodFailuresTolerated, when set, is how many more of its pods may fail
	// before its job fails: losing more on failed nodes requeues it whole.
	PodFailuresTolerated *int32
	// PodsReady is true when all the admitted workload's pods are ready
	// (tracked only with waitForPodsReady).
	PodsReady bool
	// AdmittedAt is when the quota was reserved; preemption takes the most
	// recently admitted first, losing the least work.
	AdmittedAt time.Time
	// shape memoizes shapeKey.
	shape string
	// Evicting is true for an admitted workload that was told to stop and
	// still holds its quota until its job is suspended.
	Evicting bool
	// NeedsPreemptionSince is when a pending workload was first found to
	// fit only by preempting (zero: never, or it changed since).
	NeedsPreemptionSince time.Time
	// PriorityClass is the WorkloadPriorityClass its priority came from
	// ("" for none or a pod PriorityClass). The class's minimum runtime
	// (Cache.SetPriorityClassMinRuntime) protects it from preemption; the
	// larger of it and its queue's Preemption.MinRuntime applies.
	PriorityClass string
	// AwaitingPlacement: the workload holds quota, every admission check
	// said Ready, and a Delayed pod set is still to be placed: the next
	// cycle places it and admits the workload.
	AwaitingPlacement bool
	// MaxRuntime is the workload's declared runtime bound (its maximum
	// execution time): it is deactivated when admitted longer, so it frees
	// its quota by AdmittedAt+MaxRuntime. Zero: its queue's, if any.
	MaxRuntime time.Duration
}

// Admission is the quota a workload holds.
type Admission struct {
	ClusterQueue string
	PodSets      []PodSetAssignment
}

// PodSetAssignment is the flavor of each resource of one pod set.
type PodSetAssignment struct {
	Name  string
	Count int32
	// Flavors maps each requested resource to its flavor.
	Flavors map[string]string
	// Usage is the total for the pod set: per-pod requests times Count.
	Usage Requests
	// Placement is where the pods go, when a flavor has a topology.
	Placement *Placement
	// Delayed: the pod set's flavor gets its nodes from an admission check
	// (a ProvisioningRequest), so it is placed only once the check is
	// Ready and the nodes exist; until then Placement is nil.
	Delayed bool
}

// Usage is the quota the admission holds, per flavor and resource.
func (a *Admission) Usage() Usage {
	u := Usage{}
	for _, ps := range a.PodSets {
		for res, v := range ps.Usage {
			u[FlavorResource{Flavor: ps.Flavors[res], Resource: res}] += v
		}
	}
	return u
}

// SameRequest reports whether two workloads ask for the same thing in the same
// place, so an update between them needs no new scheduling attempt.
func SameRequest(a, b *Workload) bool {
	if a.Queue != b.Queue || a.Priority != b.Priority || a.MaxRuntime != b.MaxRuntime || len(a.PodSets) != len(b.PodSets) ||
		!maps.Equal(a.NamespaceLabels, b.NamespaceLabels) {
		return false
	}
	for i := range a.PodSets {
		pa, pb := &a.PodSets[i], &b.PodSets[i]
		if pa.Name != pb.Name || pa.Count != pb.Count || !maps.Equal(pa.Requests, pb.Requests) ||
			!maps.Equal(pa.NodeSelector, pb.NodeSelector) || !slices.Equal(pa.Tolerations, pb.Tolerations) ||
			placementKey(pa) != placementKey(pb) {
			return false
		}
	}
	return true
}

// ShapeKey identifies what a workload asks for, whoever it is: workloads of
// one queue with the same key fit or fail alike.
func (w *Workload) ShapeKey() string {
	if w.shape != "" {
		return w.shape
	}
	var b strings.Builder
	for _, ps := range w.PodSets {
		fmt.Fprintf(&b, "%d/%d|", ps.Count, ps.MinCount)
		for _, k := range slices.Sorted(maps.Keys(ps.Requests)) {
			fmt.Fprintf(&b, "%s=%d,", k, ps.Requests[k])
		}
		b.WriteByte('|')
		for _, k := range slices.Sorted(maps.Keys(ps.NodeSelector)) {
			fmt.Fprintf(&b, "%s=%s,", k, ps.NodeSelector[k])
		}
		fmt.Fprintf(&b, "|%v|%s;", ps.Tolerations, placementKey(&ps))
	}
	for _, k := range slices.Sorted(maps.Keys(w.NamespaceLabels)) {
		fmt.Fprintf(&b, "%s=%s,", k, w.NamespaceLabels[k])
	}
	w.shape = b.String()
	return w.shape
}

func (cq *ClusterQueue) Covers(res string) bool {
	for _, g := range cq.ResourceGroups {
		if slices.Contains(g.Resources, res) {
			return true
		}
	}
	return false
}

// Shrinkable reports whether some pod set of the workload may be admitted
// with fewer pods than it asks.
func (w *Workload) Shrinkable() bool {
	for i := range w.PodSets {
		if ps := &w.PodSets[i]; ps.MinCount > 0 && ps.MinCount < ps.Count {
			return true
		}
	}
	return false
}

func LocalQueueKey(wl *Workload) string { return wl.Namespace + "/" + wl.Queue }

// WithCounts is the workload with other pod set counts: a copy that shares
// everything else.
func WithCounts(wl *Workload, counts []int32) *Workload {
	c := *wl
	c.shape = ""
	c.PodSets = append([]PodSet(nil), wl.PodSets...)
	for i := range c.PodSets {
		c.PodSets[i].Count = counts[i]
	}
	return &c
}
