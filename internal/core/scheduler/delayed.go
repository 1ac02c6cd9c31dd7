package scheduler

import (
	"github.com/musterhq/muster/internal/core"
)

// placeDelayed decides, for each workload holding quota whose admission
// checks are all Ready, where its Delayed pod sets go, now that the nodes
// the checks provisioned exist (Kueue's delayed topology request). The
// placement is taken in the snapshot before anything else of the cycle is
// decided, so no pending workload is promised the same nodes. A workload
// that does not fit yet gets a Place decision without an admission: it
// keeps its quota and is tried again in the next cycle.
func placeDelayed(s *Snapshot) []Decision {
	var out []Decision
	for _, key := range s.Unplaced {
		wl := s.admitted(key)
		if wl == nil || wl.Evicting || wl.Admission == nil {
			continue
		}
		adm := withFreshPodSets(wl.Admission)
		fail := placeSome(s, wl, adm, func(i int, _ *core.Flavor) bool {
			return adm.PodSets[i].Delayed && adm.PodSets[i].Placement == nil
		})
		if fail != nil {
			out = append(out, Decision{Workload: wl, Placing: true, EvictDetail: fail.reason.Text})
			continue
		}
		for i := range adm.PodSets {
			adm.PodSets[i].Delayed = false
		}
		commitPlacements(s, onlyNew(wl.Admission, adm))
		out = append(out, Decision{Workload: wl, Admission: adm, Placing: true})
	}
	return out
}

// withFreshPodSets copies an admission so that placing its pod sets
// leaves the cached one as it is.
func withFreshPodSets(adm *core.Admission) *core.Admission {
	c := *adm
	c.PodSets = append([]core.PodSetAssignment(nil), adm.PodSets...)
	return &c
}

// onlyNew is the part of a placed admission that the old one did not
// place: what the snapshot must still take.
func onlyNew(old, placed *core.Admission) *core.Admission {
	c := &core.Admission{ClusterQueue: placed.ClusterQueue}
	for i := range placed.PodSets {
		if old.PodSets[i].Placement == nil && placed.PodSets[i].Placement != nil {
			c.PodSets = append(c.PodSets, placed.PodSets[i])
		}
	}
	return c
}
