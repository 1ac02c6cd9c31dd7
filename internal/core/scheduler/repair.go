package scheduler

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
	"github.com/musterhq/muster/internal/topology"
)

// repair decides, for each admitted workload with pods placed on a failed
// node (gone, not Ready, tainted NoExecute), a new placement that moves
// only those pods, inside the domain of the level the pod set requires
// and with room now, or else its eviction. The new placement is taken in
// the snapshot before anything else of the cycle.
func repair(s *Snapshot) []Decision {
	keys := make([]string, 0, len(s.Broken))
	for key := range s.Broken {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var out []Decision
	for _, key := range keys {
		wl := s.admitted(key)
		if wl == nil || wl.Evicting {
			continue
		}
		lost := s.dueFailures(s.Broken[key])
		if len(lost) == 0 {
			continue
		}
		adm, err := replaceNodes(s, wl, lost)
		if err != nil {
			out = append(out, Decision{Workload: wl, Evict: NodeFailed, Lost: lost,
				EvictDetail: err.Error()})
			continue
		}
		out = append(out, Decision{Workload: wl, Admission: adm, Lost: lost})
	}
	return out
}

// dueFailures are the failed nodes whose failure is acted on now: gone or
// tainted at once, NotReady once the grace period has passed since it
// stopped being Ready. It keeps the snapshot's repairWait at the time left
// for the next one. Without a time (SetNow), every failure is due.
func (s *Snapshot) dueFailures(nodes []string) []string {
	var due []string
	for _, name := range nodes {
		n := s.Nodes[name]
		if n == nil || n.Ready || s.now.IsZero() || s.cfg.NodeFailureGrace <= 0 || n.NotReadySince.IsZero() {
			due = append(due, name)
			continue
		}
		left := n.NotReadySince.Add(s.cfg.NodeFailureGrace).Sub(s.now)
		if left <= 0 {
			due = append(due, name)
			continue
		}
		if s.repairWait == 0 || left < s.repairWait {
			s.repairWait = left
		}
	}
	return due
}

// RepairWait is, after Schedule, how long until a NotReady node of an
// admitted placement has been so for the grace period (0: none waits):
// the caller runs a cycle then, to repair it.
func (s *Snapshot) RepairWait() time.Duration { return s.repairWait }

// admitted finds an admitted workload in the snapshot.
func (s *Snapshot) admitted(key string) *core.Workload {
	for _, q := range s.Queues {
		if wl := q.Workloads[key]; wl != nil {
			return wl
		}
	}
	return nil
}

// replaceNodes returns wl's admission with the pods on the lost nodes
// moved, and takes the moved pods' room in the snapshot.
func replaceNodes(s *Snapshot, wl *core.Workload, lost []string) (*core.Admission, error) {
	if n := podsOn(wl, lost); wl.PodFailuresTolerated != nil && n > *wl.PodFailuresTolerated {
		return nil, fmt.Errorf("its %d pods there would count as failures of its job, which tolerates %d more; the job is requeued whole",
			n, *wl.PodFailuresTolerated)
	}
	adm := &core.Admission{ClusterQueue: wl.Admission.ClusterQueue, PodSets: append([]core.PodSetAssignment(nil), wl.Admission.PodSets...)}
	var moved []*core.Placement
	for i := range adm.PodSets {
		psa := &adm.PodSets[i]
		if psa.Placement == nil || !touches(psa.Placement.Assignment, lost) || i >= len(wl.PodSets) {
			continue
		}
		pl, err := replacePodSet(s, &wl.PodSets[i], psa, lost)
		if err != nil {
			releasePlacements(s, moved)
			return nil, err
		}
		psa.Placement = pl
		moved = append(moved, pl)
	}
	return adm, nil
}

// replacePodSet moves one pod set's pods off the lost nodes.
func replacePodSet(s *Snapshot, ps *core.PodSet, psa *core.PodSetAssignment, lost []string) (*core.Placement, error) {
	old := psa.Placement
	ts, f := s.Topologies[old.Topology], s.Flavor(quota.FirstTopologyFlavor(*psa, s.Flavors))
	if ts == nil || f == nil {
		return nil, fmt.Errorf("the topology %s of its placement is gone", old.Topology)
	}
	if f.Pinned && len(old.Nodes) == 1 {
		// Its job's template names the node (see Flavor.Pinned): moving the
		// placement would leave the replacement pods pinned to the lost
		// node, and the job counting them as failures.
		return nil, fmt.Errorf("pod set %s is pinned to node %s by its job's template; the job is requeued whole",
			ps.Name, old.Nodes[0].Name)
	}
	level := ""
	if t := ps.Topology; t != nil && t.Mode == topology.Required {
		level = t.Level
	}
	a, err := ts.Replace(old.Assignment, lost, topologyPodSet(s, ps, psa, f), level)
	if err != nil {
		return nil, err
	}
	// The snapshot counts the old placement: swap it for the new one.
	_ = ts.Unapply(ts.Bind(old.Assignment))
	if err := ts.Apply(a); err != nil {
		_ = ts.Apply(ts.Bind(old.Assignment))
		return nil, err
	}
	return &core.Placement{Topology: old.Topology, Assignment: a}, nil
}

// podsOn counts the workload's pods placed on the nodes.
func podsOn(wl *core.Workload, nodes []string) int32 {
	var n int32
	for _, psa := range wl.Admission.PodSets {
		if psa.Placement == nil {
			continue
		}
		for _, nc := range psa.Placement.Nodes {
			if slices.Contains(nodes, nc.Name) {
				n += nc.Count
			}
		}
	}
	return n
}

func touches(a *topology.Assignment, nodes []string) bool {
	return slices.ContainsFunc(a.Nodes, func(n topology.NodeCount) bool { return slices.Contains(nodes, n.Name) })
}

// lostMessage names the failed nodes of an eviction or a replacement.
func lostMessage(lost []string) string {
	if len(lost) == 1 {
		return "node " + lost[0]
	}
	return "nodes " + strings.Join(lost, ", ")
}
