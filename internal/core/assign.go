package core

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// podsResource is the pod-count resource; a queue that covers it counts pods.
const podsResource = "pods"

// NoFit explains why a workload does not fit a ClusterQueue: for the first
// pod set that failed, why each flavor was rejected.
type NoFit struct {
	PodSet  string
	Reasons []string
	// Never is true when the workload cannot fit even in an empty queue, so
	// waiting will not help (a resource not covered, a request above quota).
	Never bool
}

// Message is the text users read in the workload's QuotaReserved condition.
func (n *NoFit) Message() string {
	return fmt.Sprintf("couldn't assign flavors to pod set %s: %s", n.PodSet, strings.Join(n.Reasons, "; "))
}

// Assign picks, for every pod set of wl, one flavor per resource group such
// that the whole workload fits in the queue's available quota. Flavors are
// tried in the queue's order. It returns the admission, or why there is none.
func Assign(s *Snapshot, q *QueueSnapshot, wl *Workload) (*Admission, *NoFit) {
	adm := &Admission{ClusterQueue: q.Name}
	taken := Usage{} // quota taken by earlier pod sets of this workload
	for i := range wl.PodSets {
		psa, noFit := assignPodSet(s, q, &wl.PodSets[i], taken)
		if noFit != nil {
			return nil, noFit
		}
		for res, v := range psa.Usage {
			taken[FlavorResource{Flavor: psa.Flavors[res], Resource: res}] += v
		}
		adm.PodSets = append(adm.PodSets, *psa)
	}
	return adm, nil
}

func assignPodSet(s *Snapshot, q *QueueSnapshot, ps *PodSet, taken Usage) (*PodSetAssignment, *NoFit) {
	total := podSetTotal(q.ClusterQueue, ps)
	psa := &PodSetAssignment{Name: ps.Name, Count: ps.Count, Flavors: map[string]string{}, Usage: total}
	groups, uncovered := groupRequests(q.ClusterQueue, total)
	if len(uncovered) > 0 {
		return nil, &NoFit{PodSet: ps.Name, Never: true, Reasons: []string{
			fmt.Sprintf("resource %s is not covered by ClusterQueue %s", strings.Join(uncovered, ", "), q.Name)}}
	}
	for _, g := range groups {
		flavor, noFit := pickFlavor(s, q, ps, g, total, taken)
		if noFit != nil {
			return nil, noFit
		}
		for _, res := range g.requested {
			psa.Flavors[res] = flavor
		}
	}
	return psa, nil
}

// podSetTotal is the pod set's per-pod requests times its count, with the
// pod count itself when the queue covers "pods".
func podSetTotal(cq *ClusterQueue, ps *PodSet) Requests {
	total := ps.Requests.Scaled(ps.Count)
	for name, v := range total {
		if v == 0 {
			delete(total, name)
		}
	}
	if _, explicit := total[podsResource]; !explicit && cq.covers(podsResource) {
		total[podsResource] = int64(ps.Count) * 1000
	}
	return total
}

func (cq *ClusterQueue) covers(res string) bool {
	for _, g := range cq.ResourceGroups {
		if slices.Contains(g.Resources, res) {
			return true
		}
	}
	return false
}

type groupRequest struct {
	group     *ResourceGroup
	requested []string
}

// groupRequests sorts the requested resources into the queue's resource
// groups, in group order, and lists those no group covers.
func groupRequests(cq *ClusterQueue, total Requests) ([]groupRequest, []string) {
	names := make([]string, 0, len(total))
	for name := range total {
		names = append(names, name)
	}
	sort.Strings(names)
	var groups []groupRequest
	var uncovered []string
	for _, name := range names {
		gi := slices.IndexFunc(cq.ResourceGroups, func(g ResourceGroup) bool { return slices.Contains(g.Resources, name) })
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

// pickFlavor returns the first flavor of the group, in order, that the pod
// set may use and that has room for all its requested resources.
func pickFlavor(s *Snapshot, q *QueueSnapshot, ps *PodSet, g groupRequest, total Requests, taken Usage) (string, *NoFit) {
	noFit := &NoFit{PodSet: ps.Name, Never: true}
	for _, fq := range g.group.Flavors {
		f := s.Flavor(fq.Flavor)
		if f == nil {
			noFit.Reasons = append(noFit.Reasons, fmt.Sprintf("flavor %s not found", fq.Flavor))
			continue
		}
		if why := placementMismatch(ps, f); why != "" {
			noFit.Reasons = append(noFit.Reasons, why)
			continue
		}
		fits := true
		for _, res := range g.requested {
			fr := FlavorResource{Flavor: fq.Flavor, Resource: res}
			need, avail := total[res], q.Available(fr)-taken[fr]
			if need <= avail {
				continue
			}
			fits = false
			quota := fq.Resources[res].Nominal
			if need <= quota {
				noFit.Never = false
			}
			noFit.Reasons = append(noFit.Reasons, fmt.Sprintf("insufficient quota for %s in flavor %s: %s requested, %s available (quota %s)",
				res, fq.Flavor, Format(res, need), Format(res, max(avail, 0)), Format(res, quota)))
			break
		}
		if fits {
			return fq.Flavor, nil
		}
	}
	return "", noFit
}

// placementMismatch says why the pod set cannot run on the flavor's nodes:
// a node selector the flavor's labels contradict, or a taint nobody
// tolerates. Empty means it can.
func placementMismatch(ps *PodSet, f *Flavor) string {
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
		if !tolerated(t, ps.Tolerations) && !tolerated(t, f.Tolerations) {
			return fmt.Sprintf("untolerated taint %s=%s:%s in flavor %s", t.Key, t.Value, t.Effect, f.Name)
		}
	}
	return ""
}

func tolerated(t Taint, tolerations []Toleration) bool {
	for _, tol := range tolerations {
		if tol.Effect != "" && tol.Effect != t.Effect {
			continue
		}
		if tol.Key == "" && tol.Operator == "Exists" {
			return true
		}
		if tol.Key != t.Key {
			continue
		}
		if tol.Operator == "Exists" || tol.Value == t.Value {
			return true
		}
	}
	return false
}

// Format renders a milli-unit quantity of a resource as Kubernetes would.
func Format(res string, milli int64) string {
	format := resource.DecimalSI
	if res == "memory" || strings.HasSuffix(res, "storage") || strings.HasPrefix(res, "hugepages-") {
		format = resource.BinarySI
	}
	return resource.NewMilliQuantity(milli, format).String()
}
