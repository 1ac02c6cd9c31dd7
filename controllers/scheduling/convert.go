package scheduling

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
	"github.com/musterhq/muster/internal/core/scheduler"
	"github.com/musterhq/muster/internal/podrequests"
	"github.com/musterhq/muster/internal/workload"
)

// This file translates API objects into the core's model and back.

func toFlavor(rf *musterv1beta1.ResourceFlavor) *core.Flavor {
	f := &core.Flavor{Name: rf.Name, NodeLabels: rf.Spec.NodeLabels}
	for _, t := range rf.Spec.NodeTaints {
		f.Taints = append(f.Taints, core.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	f.Tolerations = toTolerations(rf.Spec.Tolerations)
	f.Topology = string(rf.Spec.TopologyName)
	f.Pinned = rf.Spec.EffectiveNodeFit() == musterv1beta1.NodeFitPin
	if f.Topology == "" && rf.Spec.EffectiveNodeFit() != musterv1beta1.NodeFitNone {
		f.Topology = quota.NodesTopology
	}
	return f
}

func toTolerations(ts []corev1.Toleration) []core.Toleration {
	var out []core.Toleration
	for _, t := range ts {
		out = append(out, core.Toleration{Key: t.Key, Operator: string(t.Operator), Value: t.Value, Effect: string(t.Effect)})
	}
	return out
}

func toClusterQueue(cq *musterv1beta1.ClusterQueue) *core.ClusterQueue {
	out := &core.ClusterQueue{
		Name:           cq.Name,
		Cohort:         string(cq.Spec.Cohort),
		ResourceGroups: toResourceGroups(cq.Spec.ResourceGroups),
		Weight:         weightOf(cq.Spec.FairSharing),
	}
	if g := cq.Spec.GangScheduling; g != nil {
		out.Gang = string(g.Provider)
	}
	if sel := cq.Spec.NamespaceSelector; sel != nil {
		if s, err := metav1.LabelSelectorAsSelector(sel); err == nil {
			out.NamespaceSelector = labelSelector{s}
		}
	}
	if p := cq.Spec.Preemption; p != nil {
		out.Preemption = core.Preemption{
			WithinClusterQueue:  toPolicy(p.WithinClusterQueue),
			ReclaimWithinCohort: toPolicy(p.ReclaimWithinCohort),
		}
		if b := p.BorrowWithinCohort; b != nil {
			out.Preemption.BorrowWithinCohort = toPolicy(b.Policy)
			out.Preemption.MaxPriorityThreshold = b.MaxPriorityThreshold
		}
		out.Preemption.MinRuntime = seconds(p.MinRuntimeSeconds)
	}
	out.Fungibility = core.FlavorFungibility{StopAtBorrow: true}
	if f := cq.Spec.FlavorFungibility; f != nil {
		out.Fungibility = core.FlavorFungibility{
			StopAtBorrow:  f.WhenCanBorrow != musterv1beta1.TryNextFlavor,
			StopAtPreempt: f.WhenCanPreempt == musterv1beta1.Preempt,
		}
	}
	if cq.Spec.QueueingStrategy == musterv1beta1.StrictFIFO {
		out.Strategy = core.StrictFIFO
	}
	if s := cq.Spec.Starvation; s != nil {
		out.StarvationAfter = seconds(s.AfterSeconds)
		out.StarvationYieldAfter = scheduler.DefaultStarvationYield(out.StarvationAfter)
		if s.YieldAfterSeconds != nil {
			out.StarvationYieldAfter = seconds(s.YieldAfterSeconds)
		}
	}
	out.MaxRuntime = seconds(cq.Spec.MaximumExecutionTimeSeconds)
	if a := cq.Spec.AdmissionScope; a != nil {
		out.AdmissionFairSharing = a.AdmissionMode == musterv1beta1.UsageBasedAdmissionFairSharing
	}
	out.Checks = toCheckRules(&cq.Spec)
	out.Stop = toStop(cq.Spec.StopPolicy)
	// A ClusterQueue being deleted admits nothing new.
	if !cq.DeletionTimestamp.IsZero() && out.Stop == core.Running {
		out.Stop = core.Hold
	}
	return out
}

// toCheckRules lists a queue's admission checks, from either field.
func toCheckRules(spec *musterv1beta1.ClusterQueueSpec) []core.CheckRule {
	var out []core.CheckRule
	for _, name := range spec.AdmissionChecks {
		out = append(out, core.CheckRule{Name: string(name)})
	}
	if st := spec.AdmissionChecksStrategy; st != nil {
		for _, r := range st.AdmissionChecks {
			rule := core.CheckRule{Name: string(r.Name)}
			for _, f := range r.OnFlavors {
				rule.OnFlavors = append(rule.OnFlavors, string(f))
			}
			out = append(out, rule)
		}
	}
	return out
}

// ChecksFor names the admission checks of a ClusterQueue that apply to an
// admission, as the core decides it at reservation (core.ChecksFor).
func ChecksFor(spec *musterv1beta1.ClusterQueueSpec, adm *musterv1beta1.Admission) []string {
	q := core.ClusterQueue{Checks: toCheckRules(spec)}
	flavors := &core.Admission{}
	for _, psa := range adm.PodSetAssignments {
		a := core.PodSetAssignment{Flavors: map[string]string{}}
		for res, f := range psa.Flavors {
			a.Flavors[string(res)] = string(f)
		}
		flavors.PodSets = append(flavors.PodSets, a)
	}
	return q.ChecksFor(flavors)
}

// seconds is an optional count of seconds as a duration; unset is 0.
func seconds(s *int32) time.Duration {
	return time.Duration(ptr.Deref(s, 0)) * time.Second
}

func toCohort(co *musterv1beta1.Cohort) *core.Cohort {
	return &core.Cohort{
		Name:           co.Name,
		Parent:         string(co.Spec.Parent),
		ResourceGroups: toResourceGroups(co.Spec.ResourceGroups),
		Weight:         weightOf(co.Spec.FairSharing),
	}
}

func toStop(p *musterv1beta1.StopPolicy) core.StopPolicy {
	if p == nil {
		return core.Running
	}
	switch *p {
	case musterv1beta1.Hold:
		return core.Hold
	case musterv1beta1.HoldAndDrain:
		return core.HoldAndDrain
	}
	return core.Running
}

func toPolicy(p musterv1beta1.PreemptionPolicy) core.PreemptionPolicy {
	switch p {
	case musterv1beta1.PreemptionPolicyLowerPriority:
		return core.PreemptLowerPriority
	case musterv1beta1.PreemptionPolicyLowerOrNewerEqualPriority:
		return core.PreemptLowerOrNewerEqualPriority
	case musterv1beta1.PreemptionPolicyAny:
		return core.PreemptAny
	}
	return core.PreemptNever
}

// weightOf is a fair-sharing weight in milli-units; unset means 1.
func weightOf(fs *musterv1beta1.FairSharing) int64 {
	if fs == nil || fs.Weight == nil {
		return 1000
	}
	return fs.Weight.MilliValue()
}

// labelSelector adapts a labels.Selector to the core.
type labelSelector struct{ s labels.Selector }

func (l labelSelector) Matches(m map[string]string) bool { return l.s.Matches(labels.Set(m)) }

func toResourceGroups(groups []musterv1beta1.ResourceGroup) []core.ResourceGroup {
	var out []core.ResourceGroup
	for _, g := range groups {
		cg := core.ResourceGroup{}
		for _, r := range g.CoveredResources {
			cg.Resources = append(cg.Resources, string(r))
		}
		for _, f := range g.Flavors {
			fq := core.FlavorQuotas{Flavor: string(f.Name), Resources: map[string]core.ResourceQuota{}}
			for _, r := range f.Resources {
				fq.Resources[string(r.Name)] = core.ResourceQuota{
					Nominal:        core.Amount(string(r.Name), r.NominalQuota),
					BorrowingLimit: amountPtr(string(r.Name), r.BorrowingLimit),
					LendingLimit:   amountPtr(string(r.Name), r.LendingLimit),
				}
			}
			cg.Flavors = append(cg.Flavors, fq)
		}
		out = append(out, cg)
	}
	return out
}

func amountPtr(res string, q *resource.Quantity) *int64 {
	if q == nil {
		return nil
	}
	v := core.Amount(res, *q)
	return &v
}

// ToWorkload builds the core's view of a Workload: per-pod requests
// computed as the kubelet would (init containers, sidecars, overhead).
func ToWorkload(wl *musterv1beta1.Workload, namespaceLabels map[string]string) *core.Workload {
	return toWorkloadWith(wl, namespaceLabels, func(string) string { return "" })
}

// toWorkloadWith is toWorkload reading the placements of an admitted
// workload in the topology of their flavor, as topologyOf says.
func toWorkloadWith(wl *musterv1beta1.Workload, namespaceLabels map[string]string, topologyOf func(flavor string) string) *core.Workload {
	out := &core.Workload{
		Key:             wl.Namespace + "/" + wl.Name,
		Namespace:       wl.Namespace,
		Name:            wl.Name,
		Queue:           string(wl.Spec.QueueName),
		Created:         queueOrderingTime(wl),
		ResourceVersion: wl.ResourceVersion,
		NamespaceLabels: namespaceLabels,
	}
	if wl.Spec.Priority != nil {
		out.Priority = *wl.Spec.Priority
	}
	if wl.Spec.PriorityClassSource == musterv1beta1.WorkloadPriorityClassSource {
		out.PriorityClass = wl.Spec.PriorityClassName
	}
	out.MaxRuntime = remainingRuntime(wl)
	out.PodFailuresTolerated = podFailuresTolerated(wl)
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		// The job reconciler records pod sets with their LimitRange defaults
		// and overhead; a Workload created directly gets at least its
		// limits counted as the requests its pods will have.
		reqs := podrequests.PerPod(&ps.Template.Spec, nil, nil)
		cps := core.PodSet{
			Name:         ps.Name,
			Count:        ps.Count,
			MinCount:     ptr.Deref(ps.MinCount, 0),
			Requests:     core.Requests{},
			NodeSelector: ps.Template.Spec.NodeSelector,
			Tolerations:  toTolerations(ps.Template.Spec.Tolerations),
			Affinity:     toAffinity(&ps.Template.Spec),
			Topology:     toTopologyRequest(ps.TopologyRequest),
		}
		for name, q := range reqs {
			cps.Requests[string(name)] = core.Amount(string(name), q)
		}
		out.PodSets = append(out.PodSets, cps)
	}
	if adm := wl.Status.Admission; adm != nil {
		out.Admission = toAdmission(adm, out.PodSets, topologyOf)
		out.Evicting = workload.IsEvicting(wl)
		out.AdmittedAt = workload.ReservedAt(wl)
		out.PodsReady = workload.IsPodsReady(wl)
		out.AwaitingPlacement = workload.PlacementDelayed(wl) && workload.ChecksReady(wl) && !out.Evicting
	}
	return out
}

// remainingRuntime is the workload's own runtime bound for its next (or
// current) admission: its maximum execution time less what its earlier
// admissions used (at least a second, so a bound stays a bound); 0 when it
// sets none.
func remainingRuntime(wl *musterv1beta1.Workload) time.Duration {
	limit := seconds(wl.Spec.MaximumExecutionTimeSeconds)
	if limit <= 0 {
		return 0
	}
	return max(time.Second, limit-seconds(wl.Status.AccumulatedPastExecutionTimeSeconds))
}

// queueOrderingTime is when the workload joined its queue: its job's
// creation (or its own when it has no job), or
// for a workload evicted and requeued, the requeue. A preempted workload goes
// behind those that waited while it ran, instead of taking back the quota
// its preemptor is waiting for.
func queueOrderingTime(wl *musterv1beta1.Workload) time.Time {
	t := joinedAt(wl)
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadRequeued); c != nil && c.Status == metav1.ConditionTrue {
		if c.LastTransitionTime.After(t) {
			t = c.LastTransitionTime.Time
		}
	}
	return t
}

func toAdmission(adm *musterv1beta1.Admission, podSets []core.PodSet, topologyOf func(string) string) *core.Admission {
	out := &core.Admission{ClusterQueue: string(adm.ClusterQueue)}
	for i, psa := range adm.PodSetAssignments {
		a := core.PodSetAssignment{Name: psa.Name, Flavors: map[string]string{}, Usage: core.Requests{}}
		if psa.Count != nil {
			a.Count = *psa.Count
		}
		for res, f := range psa.Flavors {
			a.Flavors[string(res)] = string(f)
		}
		for res, q := range psa.ResourceUsage {
			a.Usage[string(res)] = core.Amount(string(res), q)
		}
		if ta := psa.TopologyAssignment; ta != nil && i < len(podSets) {
			a.Placement = toPlacement(ta, placementTopology(a.Flavors, topologyOf), podSets[i].Requests)
		}
		a.Delayed = psa.DelayedTopologyRequest != nil && *psa.DelayedTopologyRequest == musterv1beta1.DelayedTopologyRequestPending
		out.PodSets = append(out.PodSets, a)
	}
	return out
}

func FromAdmission(adm *core.Admission) *musterv1beta1.Admission {
	out := &musterv1beta1.Admission{ClusterQueue: musterv1beta1.ClusterQueueReference(adm.ClusterQueue)}
	for _, psa := range adm.PodSets {
		a := musterv1beta1.PodSetAssignment{
			Name:               psa.Name,
			Flavors:            map[corev1.ResourceName]musterv1beta1.ResourceFlavorReference{},
			ResourceUsage:      corev1.ResourceList{},
			Count:              &psa.Count,
			TopologyAssignment: fromPlacement(psa.Placement),
		}
		if psa.Delayed {
			a.DelayedTopologyRequest = ptr.To(musterv1beta1.DelayedTopologyRequestPending)
		}
		for res, f := range psa.Flavors {
			a.Flavors[corev1.ResourceName(res)] = musterv1beta1.ResourceFlavorReference(f)
		}
		for res, v := range psa.Usage {
			a.ResourceUsage[corev1.ResourceName(res)] = core.Quantity(res, v)
		}
		out.PodSetAssignments = append(out.PodSetAssignments, a)
	}
	return out
}

// placementTopology is the topology of the pod set's flavor that has one.
func placementTopology(flavors map[string]string, topologyOf func(string) string) string {
	for _, res := range slices.Sorted(maps.Keys(flavors)) {
		if t := topologyOf(flavors[res]); t != "" {
			return t
		}
	}
	return ""
}

// joinedAt is when the workload first joined its queue: when its job was
// created, or it was.
func joinedAt(wl *musterv1beta1.Workload) time.Time {
	t := wl.CreationTimestamp.Time
	if jobCreated, err := time.Parse(time.RFC3339, wl.Annotations[musterv1beta1.JobCreatedAtAnnotation]); err == nil && jobCreated.Before(t) {
		t = jobCreated
	}
	return t
}

// EvictionReason is the Evicted reason of a core eviction.
func EvictionReason(e scheduler.Eviction) string {
	switch e {
	case scheduler.ClusterQueueStopped:
		return musterv1beta1.ReasonClusterQueueStopped
	case scheduler.LocalQueueStopped:
		return musterv1beta1.ReasonLocalQueueStopped
	case scheduler.NodeFailed:
		return musterv1beta1.ReasonNodeFailures
	}
	return musterv1beta1.ReasonEvicted
}

// PreemptionReason is the Preempted reason of a core preemption.
func PreemptionReason(r scheduler.PreemptionReason) string {
	switch r {
	case scheduler.InClusterQueue:
		return musterv1beta1.ReasonInClusterQueue
	case scheduler.InCohortReclamation:
		return musterv1beta1.ReasonInCohortReclamation
	case scheduler.InCohortReclaimWhileBorrowing:
		return musterv1beta1.ReasonInCohortReclaimWhileBorrowing
	case scheduler.InCohortFairSharing:
		return musterv1beta1.ReasonInCohortFairSharing
	}
	return musterv1beta1.ReasonPreempted
}

// toFlavorUsage reports usage per flavor and resource, with the part
// borrowed from the cohort when borrowed is given.
func toFlavorUsage(u, borrowed core.Usage) []musterv1beta1.FlavorUsage {
	byFlavor := map[string][]musterv1beta1.ResourceUsage{}
	for fr, v := range u {
		ru := musterv1beta1.ResourceUsage{Name: corev1.ResourceName(fr.Resource), Total: core.Quantity(fr.Resource, v)}
		if b := borrowed[fr]; b > 0 {
			ru.Borrowed = core.Quantity(fr.Resource, b)
		}
		byFlavor[fr.Flavor] = append(byFlavor[fr.Flavor], ru)
	}
	return groupedByFlavor(byFlavor)
}

// groupedByFlavor is per-flavor resource usage as the status lists it:
// flavors by name, resources in each sorted.
func groupedByFlavor(byFlavor map[string][]musterv1beta1.ResourceUsage) []musterv1beta1.FlavorUsage {
	flavors := make([]string, 0, len(byFlavor))
	for f := range byFlavor {
		flavors = append(flavors, f)
	}
	sort.Strings(flavors)
	out := make([]musterv1beta1.FlavorUsage, 0, len(flavors))
	for _, f := range flavors {
		rs := byFlavor[f]
		sortResourceUsage(rs)
		out = append(out, musterv1beta1.FlavorUsage{Name: musterv1beta1.ResourceFlavorReference(f), Resources: rs})
	}
	return out
}

// podFailuresTolerated is the job's bound its reconciler recorded on the
// Workload; nil when none (or malformed: no bound is assumed).
func podFailuresTolerated(wl *musterv1beta1.Workload) *int32 {
	v, ok := wl.Annotations[musterv1beta1.PodFailuresToleratedAnnotation]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return nil
	}
	return ptr.To(int32(n))
}
