package scheduler

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
	"github.com/musterhq/muster/internal/topology"
)

// placeFailure says why the pod sets assigned to a topology flavor could
// not be placed: the flavor to try without, and the reason in words.
type placeFailure struct {
	flavor string
	reason core.Reason
	// never: the request is malformed for this topology (a level it does
	// not have), so waiting will not help on this flavor.
	never bool
}

// placeAdmission places every pod set of adm whose flavor has a topology,
// on the cycle's snapshot, and records the placements in adm. Pod sets
// sharing a group name are placed together. Nothing is taken from the
// snapshot: commitPlacements does that when the workload is admitted.
// A pod set asking for a topology on a flavor without one fails.
//
// A pod set on a flavor whose nodes an admission check of the queue
// provisions is not placed now (there may be no such nodes yet): it is
// marked Delayed, and placeDelayed places it once the check is Ready.
func placeAdmission(s *Snapshot, wl *core.Workload, adm *core.Admission) *placeFailure {
	q := s.Queue(adm.ClusterQueue)
	return placeSome(s, wl, adm, func(i int, f *core.Flavor) bool {
		adm.PodSets[i].Delayed = q != nil && s.PlacementDelayed(q, f.Name)
		return !adm.PodSets[i].Delayed
	})
}

// placeSome places the pod sets of adm that include accepts, given their
// topology flavor.
func placeSome(s *Snapshot, wl *core.Workload, adm *core.Admission, include func(i int, f *core.Flavor) bool) *placeFailure {
	units, fail := placementUnits(s, wl, adm, include)
	if fail != nil {
		return fail
	}
	var applied []*core.Placement
	defer func() { releasePlacements(s, applied) }()
	for _, u := range units {
		pls, fail := u.place(s)
		if fail != nil {
			clearPlacements(adm)
			return fail
		}
		for i, pl := range pls {
			adm.PodSets[u.index[i]].Placement = pl
			// Taken for the pod sets placed after it, given back at the end.
			if err := s.Topologies[pl.Topology].Apply(pl.Assignment); err == nil {
				applied = append(applied, pl)
			}
		}
	}
	return nil
}

// placementUnit is one Place or PlaceGroup call: the pod sets of one
// workload that share a topology flavor and a group name.
type placementUnit struct {
	flavor *core.Flavor
	sets   []topology.PodSet
	index  []int // the pod sets' positions in the admission
}

func (u *placementUnit) place(s *Snapshot) ([]*core.Placement, *placeFailure) {
	ts := s.Topologies[u.flavor.Topology]
	var as []*topology.Assignment
	var err error
	if len(u.sets) == 1 {
		var a *topology.Assignment
		a, err = ts.Place(&u.sets[0])
		as = []*topology.Assignment{a}
	} else {
		as, err = ts.PlaceGroup(u.sets)
	}
	if err != nil {
		var nf *topology.NoFit
		if errors.As(err, &nf) && u.flavor.Topology == quota.NodesTopology {
			nf.Nodes = true
		}
		return nil, &placeFailure{flavor: u.flavor.Name, never: errors.Is(err, topology.ErrInvalid),
			reason: core.Reason{Text: fmt.Sprintf("flavor %s: %s", u.flavor.Name, describe(err))}}
	}
	pls := make([]*core.Placement, len(as))
	for i, a := range as {
		pls[i] = &core.Placement{Topology: u.flavor.Topology, Assignment: a}
	}
	return pls, nil
}

// describe renders a placement error with amounts in Kubernetes' units.
func describe(err error) string {
	var nf *topology.NoFit
	if errors.As(err, &nf) {
		return nf.Describe(core.Format)
	}
	return err.Error()
}

// placementUnits sorts the admission's pod sets into placement units, in
// pod set order.
func placementUnits(s *Snapshot, wl *core.Workload, adm *core.Admission, include func(int, *core.Flavor) bool) ([]*placementUnit, *placeFailure) {
	var units []*placementUnit
	groups := map[string]*placementUnit{}
	for i := range adm.PodSets {
		psa, ps := &adm.PodSets[i], &wl.PodSets[i]
		f := s.Flavor(quota.FirstTopologyFlavor(*psa, s.Flavors))
		if f == nil {
			if ps.Topology != nil {
				return nil, noTopologyFlavor(psa, ps)
			}
			continue
		}
		if !include(i, f) {
			continue
		}
		if s.Topologies[f.Topology] == nil {
			return nil, &placeFailure{flavor: f.Name, reason: core.Reason{Text: fmt.Sprintf("topology %s of flavor %s not found", f.Topology, f.Name)}}
		}
		tps := topologyPodSet(s, ps, psa, f)
		key := ""
		if ps.Topology != nil && ps.Topology.Group != "" {
			key = f.Name + "/" + ps.Topology.Group
		}
		if u := groups[key]; key != "" && u != nil {
			u.sets, u.index = append(u.sets, tps), append(u.index, i)
			continue
		}
		u := &placementUnit{flavor: f, sets: []topology.PodSet{tps}, index: []int{i}}
		units = append(units, u)
		if key != "" {
			groups[key] = u
		}
	}
	return units, nil
}

// noTopologyFlavor is the failure of a pod set that asks for a topology
// on flavors that have none: the flavor is passed over, as in Kueue.
func noTopologyFlavor(psa *core.PodSetAssignment, ps *core.PodSet) *placeFailure {
	names := map[string]bool{}
	for _, f := range psa.Flavors {
		names[f] = true
	}
	flavors := slices.Sorted(maps.Keys(names))
	return &placeFailure{flavor: flavors[0], reason: core.Reason{Text: fmt.Sprintf(
		"flavor %s has no topology, pod set %s asks for one", strings.Join(flavors, ", "), ps.Name)}}
}

// topologyPodSet converts a pod set for placement on a flavor.
func topologyPodSet(s *Snapshot, ps *core.PodSet, psa *core.PodSetAssignment, f *core.Flavor) topology.PodSet {
	req := topology.Resources{}
	for name, v := range ps.Requests {
		if v > 0 && name != podsResource {
			req[name] = v
		}
	}
	tps := topology.PodSet{Name: ps.Name, Count: psa.Count, Request: req, Mask: s.nodeMask(ps, f)}
	if t := ps.Topology; t != nil {
		tps.Mode, tps.Level, tps.SliceLevel, tps.SliceSize = t.Mode, t.Level, t.SliceLevel, t.SliceSize
		tps.Balanced = t.Mode == topology.Preferred && s.cfg.BalancedPlacement
	}
	return tps
}

// nodeMask returns which nodes of the flavor's topology a pod of the set
// may run on, computed once per cycle for every pod set placed alike.
func (s *Snapshot) nodeMask(ps *core.PodSet, f *core.Flavor) *topology.NodeMask {
	key := f.Name + "|" + placementClass(ps)
	m, ok := s.NodeFits[key]
	if !ok {
		m = s.Topologies[f.Topology].Mask(func(name string) bool {
			n := s.Nodes[name]
			return n != nil && core.Fits(ps, f, n)
		})
		s.NodeFits[key] = m
	}
	return m
}

// placementClass identifies what decides a pod set's nodes.
func placementClass(ps *core.PodSet) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(ps.NodeSelector)) {
		fmt.Fprintf(&b, "%s=%s,", k, ps.NodeSelector[k])
	}
	fmt.Fprintf(&b, "|%v|%v", ps.Tolerations, ps.Affinity)
	return b.String()
}

// commitPlacements takes the admitted placements' capacity in the cycle's
// snapshot, so no later decision of the cycle promises it again.
func commitPlacements(s *Snapshot, adm *core.Admission) {
	for _, ps := range adm.PodSets {
		if pl := ps.Placement; pl != nil {
			_ = s.Topologies[pl.Topology].Apply(pl.Assignment)
		}
	}
}

func releasePlacements(s *Snapshot, pls []*core.Placement) {
	for _, pl := range pls {
		_ = s.Topologies[pl.Topology].Unapply(pl.Assignment)
	}
}

func clearPlacements(adm *core.Admission) {
	for i := range adm.PodSets {
		adm.PodSets[i].Placement = nil
	}
}

// topologyFlavors lists the flavors of an admission that have a topology.
func topologyFlavors(s *Snapshot, adm *core.Admission) []string {
	seen := map[string]bool{}
	for _, ps := range adm.PodSets {
		for _, f := range ps.Flavors {
			if fl := s.Flavor(f); fl != nil && fl.Topology != "" {
				seen[f] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
