package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
)

// podsResource is the pod-count resource; a queue that covers it counts pods.
const podsResource = "pods"

// FitMode says how a workload fits a flavor, from worst to best.
type FitMode int

const (
	// Unfit: the flavor cannot hold the workload now, even with preemption.
	Unfit FitMode = iota
	// FitPreempt: it fits once other workloads are preempted.
	FitPreempt
	// FitBorrow: it fits by borrowing from the cohort.
	FitBorrow
	// Fit: it fits in the queue's own free quota.
	Fit
)

// Assign picks, for every pod set of wl, one flavor per resource group such
// that the whole workload fits the queue's quota, borrowing from the cohort
// within the limits. Flavors are tried in the queue's order; the queue's
// flavor fungibility says whether a flavor that fits only by borrowing or
// preempting is taken or a later one looked for. A pod set whose flavor has
// a topology must also be placed on its nodes; a flavor where it cannot be
// is passed over for the next (and, if the queue may preempt, kept as the
// flavor to preempt on). It returns the admission and how it fits (the
// worst of its flavors), or why there is none. The NoFit explanation is
// also returned for FitPreempt, for when preemption finds no victims.
func Assign(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload) (*core.Admission, FitMode, *core.NoFit) {
	return assign(s, q, wl, &flavorSearch{excluded: map[string]bool{}, canPreempt: q.Preemption.Preempts()})
}

// assignUntilFree is Assign for a workload whose room will be held while
// it frees (a starving one, see reserve.go): a flavor that fits once
// others finish counts as FitPreempt even when the queue never preempts,
// so the flavors the room is held in are those it would be admitted on.
func assignUntilFree(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload) (*core.Admission, FitMode, *core.NoFit) {
	return assign(s, q, wl, &flavorSearch{excluded: map[string]bool{}, canPreempt: true})
}

// flavorSearch is what one flavor assignment carries through its pod sets:
// the flavors passed over (their placement failed) and whether a flavor
// that fits only once others leave counts (FitPreempt) or not (Unfit).
type flavorSearch struct {
	excluded   map[string]bool
	canPreempt bool
}

func assign(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, search *flavorSearch) (*core.Admission, FitMode, *core.NoFit) {
	excluded := search.excluded
	var placeReasons []core.Reason
	var fallback *core.Admission
	fallbackMode := Unfit
	never := true
	for {
		adm, mode, why := assignFlavors(s, q, wl, search)
		if mode == Unfit || len(topologyFlavors(s, adm)) == 0 && !asksTopology(wl) {
			if fallback != nil {
				n := withPlacement(why, placeReasons, false, wl)
				n.PlacementOnly = fallbackMode >= FitBorrow
				return fallback, FitPreempt, n
			}
			return adm, mode, withPlacement(why, placeReasons, never, wl)
		}
		fail := placeAdmission(s, wl, adm)
		if fail == nil {
			return adm, mode, withPlacement(why, placeReasons, false, wl)
		}
		fail.reason.Text += quotaNote(q, fail.flavor, adm)
		placeReasons = append(placeReasons, fail.reason)
		never = never && fail.never
		if fallback == nil && !fail.never && search.canPreempt {
			fallback, fallbackMode = adm, mode
		}
		excluded[fail.flavor] = true
	}
}

// quotaNote says what the quota would allow of the resources the
// admission takes from a flavor whose placement failed: the shortfall is
// in the nodes, not the quota.
func quotaNote(q *quota.QueueSnapshot, flavor string, adm *core.Admission) string {
	var parts []string
	seen := map[string]bool{}
	for _, ps := range adm.PodSets {
		for _, res := range slices.Sorted(maps.Keys(ps.Flavors)) {
			if ps.Flavors[res] != flavor || seen[res] || res == podsResource {
				continue
			}
			seen[res] = true
			parts = append(parts, core.Format(res, max(q.Available(core.FlavorResource{Flavor: flavor, Resource: res}), 0))+" "+res)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (quota allows " + strings.Join(parts, ", ") + ")"
}

// asksTopology reports whether a pod set of the workload asks for a
// topology.
func asksTopology(wl *core.Workload) bool {
	for i := range wl.PodSets {
		if wl.PodSets[i].Topology != nil {
			return true
		}
	}
	return false
}

// withPlacement adds the placement failures to the quota explanation.
func withPlacement(n *core.NoFit, reasons []core.Reason, never bool, wl *core.Workload) *core.NoFit {
	if len(reasons) == 0 {
		return n
	}
	if n == nil {
		n = &core.NoFit{PodSet: wl.PodSets[0].Name, Never: true}
	}
	n.Reasons = append(n.Reasons, reasons...)
	n.Never = n.Never && never
	return n
}

// assignFlavors is Assign's quota half, without the flavors excluded.
func assignFlavors(s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, search *flavorSearch) (*core.Admission, FitMode, *core.NoFit) {
	adm := &core.Admission{ClusterQueue: q.Name}
	mode := Fit
	var why *core.NoFit
	taken := core.Usage{} // quota taken by earlier pod sets of this workload
	for i := range wl.PodSets {
		psa, psMode, noFit := assignPodSet(s, q, &wl.PodSets[i], taken, search)
		if psMode == Unfit {
			return nil, Unfit, withTotals(noFit, q.ClusterQueue, wl)
		}
		if psMode < mode {
			mode, why = psMode, noFit
		}
		for res, v := range psa.Usage {
			taken[core.FlavorResource{Flavor: psa.Flavors[res], Resource: res}] += v
		}
		adm.PodSets = append(adm.PodSets, *psa)
	}
	return adm, mode, withTotals(why, q.ClusterQueue, wl)
}

// withTotals adds to the explanation of a workload of several pod sets what
// it requests in all of each resource found short.
func withTotals(n *core.NoFit, cq *core.ClusterQueue, wl *core.Workload) *core.NoFit {
	if n == nil || len(wl.PodSets) < 2 {
		return n
	}
	n.Totals = core.Requests{}
	for _, r := range n.Reasons {
		if _, counted := n.Totals[r.Resource]; r.Resource == "" || counted {
			continue // short in several flavors, it is still one total
		}
		for i := range wl.PodSets {
			n.Totals[r.Resource] += podSetTotal(cq, &wl.PodSets[i])[r.Resource]
		}
	}
	return n
}

func assignPodSet(s *Snapshot, q *quota.QueueSnapshot, ps *core.PodSet, taken core.Usage, search *flavorSearch) (*core.PodSetAssignment, FitMode, *core.NoFit) {
	total := podSetTotal(q.ClusterQueue, ps)
	psa := &core.PodSetAssignment{Name: ps.Name, Count: ps.Count, Flavors: map[string]string{}, Usage: total}
	groups, uncovered := groupRequests(q.ClusterQueue, total)
	if len(uncovered) > 0 {
		return nil, Unfit, &core.NoFit{PodSet: ps.Name, Never: true, Reasons: []core.Reason{{
			Text: fmt.Sprintf("resource %s is not covered by ClusterQueue %s", strings.Join(uncovered, ", "), q.Name)}}}
	}
	mode := Fit
	var why *core.NoFit
	for _, g := range groups {
		flavor, gMode, noFit := pickFlavor(s, q, ps, g, total, taken, search)
		if gMode == Unfit {
			return nil, Unfit, noFit
		}
		if gMode < mode {
			mode, why = gMode, noFit
		}
		for _, res := range g.requested {
			psa.Flavors[res] = flavor
		}
	}
	return psa, mode, why
}

// podSetTotal is the pod set's per-pod requests times its count, with the
// pod count itself when the queue covers "pods".
func podSetTotal(cq *core.ClusterQueue, ps *core.PodSet) core.Requests {
	total := ps.Requests.Scaled(ps.Count)
	for name, v := range total {
		if v == 0 {
			delete(total, name)
		}
	}
	if _, explicit := total[podsResource]; !explicit && cq.Covers(podsResource) {
		total[podsResource] = int64(ps.Count)
	}
	return total
}

type groupRequest struct {
	group     *core.ResourceGroup
	requested []string
}

// groupRequests sorts the requested resources into the queue's resource
// groups, in group order, and lists those no group covers.
func groupRequests(cq *core.ClusterQueue, total core.Requests) ([]groupRequest, []string) {
	// Preallocated, not slices.Sorted(maps.Keys(total)): this runs for
	// every pod set of every workload a cycle tries.
	names := make([]string, 0, len(total))
	for name := range total {
		names = append(names, name)
	}
	slices.Sort(names)
	var groups []groupRequest
	var uncovered []string
	for _, name := range names {
		gi := slices.IndexFunc(cq.ResourceGroups, func(g core.ResourceGroup) bool { return slices.Contains(g.Resources, name) })
		if gi < 0 {
			uncovered = append(uncovered, name)
			continue
		}
		g := &cq.ResourceGroups[gi]
		if j := slices.IndexFunc(groups, func(gr groupRequest) bool { return gr.group == g }); j >= 0 {
			groups[j].requested = append(groups[j].requested, name)
		} else {
			groups = append(groups, groupRequest{group: g, requested: []string{name}})
		}
	}
	return groups, uncovered
}

// pickFlavor returns the flavor of the group the pod set gets, and how it
// fits: the first flavor that fits outright, or, following the queue's
// fungibility, the first that fits by borrowing or by preempting.
func pickFlavor(s *Snapshot, q *quota.QueueSnapshot, ps *core.PodSet, g groupRequest, total core.Requests, taken core.Usage, search *flavorSearch) (string, FitMode, *core.NoFit) {
	noFit := &core.NoFit{PodSet: ps.Name, Never: true}
	best, bestMode := "", Unfit
	for _, fq := range g.group.Flavors {
		if search.excluded[fq.Flavor] {
			continue // its placement failed; Assign says why
		}
		f := s.Flavor(fq.Flavor)
		if f == nil {
			noFit.Reasons = append(noFit.Reasons, core.Reason{Text: "flavor " + fq.Flavor + " not found"})
			continue
		}
		if why := placementMismatch(ps, f); why != "" {
			noFit.Reasons = append(noFit.Reasons, core.Reason{Text: why})
			continue
		}
		mode, never := Fit, false
		for _, res := range g.requested {
			m, reason, resNever := fitResource(q, core.FlavorResource{Flavor: fq.Flavor, Resource: res}, total[res], taken, search.canPreempt)
			if m < FitBorrow {
				noFit.Reasons = append(noFit.Reasons, reason)
			}
			mode, never = min(mode, m), never || resNever
		}
		noFit.Never = noFit.Never && never
		if mode > bestMode {
			best, bestMode = fq.Flavor, mode
		}
		if mode == Fit || (mode == FitBorrow && q.Fungibility.StopAtBorrow) || (mode == FitPreempt && q.Fungibility.StopAtPreempt) {
			break
		}
	}
	if bestMode == Unfit {
		return "", Unfit, noFit
	}
	return best, bestMode, noFit
}

// fitResource says how need of a flavor-resource fits the queue, why not
// when it does not fit outright, and whether it never can (more than the
// queue could use with the whole cohort idle).
func fitResource(q *quota.QueueSnapshot, fr core.FlavorResource, need int64, taken core.Usage, canPreempt bool) (FitMode, core.Reason, bool) {
	avail := q.Available(fr) - taken[fr]
	used := q.Tree.Usage[fr] + taken[fr]
	nominal := q.Nominal(fr)
	switch {
	case need <= avail && used+need <= nominal:
		return Fit, core.Reason{}, false
	case need <= avail:
		return FitBorrow, core.Reason{}, false
	}
	reason := core.Reason{Resource: fr.Resource, Flavor: fr.Flavor, Need: need, Available: max(avail, 0), Quota: nominal}
	if need+taken[fr] > q.Tree.Potential(fr) {
		reason.Never = true
		return Unfit, reason, true
	}
	if canPreempt {
		return FitPreempt, reason, false
	}
	return Unfit, reason, false // fits some day, when others finish
}

// placementMismatch says why the pod set cannot run on the flavor's nodes:
// a node selector the flavor's labels contradict, or a taint nobody
// tolerates. Empty means it can.
func placementMismatch(ps *core.PodSet, f *core.Flavor) string {
	keys := make([]string, 0, len(ps.NodeSelector))
	for k := range ps.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := f.NodeLabels[k]; ok && v != ps.NodeSelector[k] {
			return fmt.Sprintf("flavor %s doesn't match node selector %s=%s", f.Name, k, ps.NodeSelector[k])
		}
	}
	for _, t := range f.Taints {
		if t.Effect != "NoSchedule" && t.Effect != "NoExecute" {
			continue
		}
		if !core.Tolerated(t, ps.Tolerations) && !core.Tolerated(t, f.Tolerations) {
			return fmt.Sprintf("untolerated taint %s=%s:%s in flavor %s", t.Key, t.Value, t.Effect, f.Name)
		}
	}
	return ""
}
