package jobframework

import (
	"context"
	"maps"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// admittedPodSetInfos is the placement of each admitted pod set.
func (r *Reconciler[T]) admittedPodSetInfos(ctx context.Context, wl *musterv1beta1.Workload) ([]PodSetInfo, error) {
	return AdmittedPlacement(ctx, r.client, wl)
}

// AdmittedPlacement is the placement of each pod set of an admitted
// workload: the node labels and tolerations of the flavors assigned to its
// resources, and its topology marks.
func AdmittedPlacement(ctx context.Context, c client.Reader, wl *musterv1beta1.Workload) ([]PodSetInfo, error) {
	flavors := map[musterv1beta1.ResourceFlavorReference]*musterv1beta1.ResourceFlavor{}
	infos := make([]PodSetInfo, 0, len(wl.Status.Admission.PodSetAssignments))
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		info := PodSetInfo{Name: psa.Name, NodeSelector: map[string]string{}}
		if psa.Count != nil {
			info.Count = *psa.Count
		}
		pin := false
		for _, name := range sortedFlavorNames(psa.Flavors) {
			rf, ok := flavors[name]
			if !ok {
				rf = &musterv1beta1.ResourceFlavor{}
				if err := c.Get(ctx, client.ObjectKey{Name: string(name)}, rf); err != nil {
					return nil, err
				}
				flavors[name] = rf
			}
			for k, v := range rf.Spec.NodeLabels {
				info.NodeSelector[k] = v
			}
			info.Tolerations = append(info.Tolerations, rf.Spec.Tolerations...)
			pin = pin || rf.Spec.EffectiveNodeFit() == musterv1beta1.NodeFitPin
		}
		if err := topologyInfo(ctx, c, wl, psa, pin, &info); err != nil {
			return nil, err
		}
		if err := addCheckUpdates(wl, &info); err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// topologyInfo marks the pods of a pod set placed in a topology, so node
// capacity knows them. A placement only checked (node fit Check) sends no
// pod anywhere: kube-scheduler binds them on the flavor's nodes. A pinned
// pod set placed on one node gets that node's hostname as a node selector
// and no gate: kube-scheduler can only put it there. Otherwise each pod
// waits at the topology gate until the ungater gives it its node; a
// selector on the domain would not do, since kube-scheduler could then
// pack two placed workloads' pods differently than the admission counted.
func topologyInfo(ctx context.Context, c client.Reader, wl *musterv1beta1.Workload, psa musterv1beta1.PodSetAssignment, pin bool, info *PodSetInfo) error {
	ta := psa.TopologyAssignment
	if ta == nil {
		return nil
	}
	info.Topology = &TopologyInfo{Workload: wl.Name, Gate: pin}
	if !pin {
		return nil
	}
	if len(ta.Domains) != 1 || len(ta.Domains[0].Leaves) != 1 {
		return nil
	}
	host, err := HostnameOf(ctx, c, ta.Domains[0].Leaves[0])
	if err != nil {
		return err
	}
	info.Topology.Gate = false
	info.NodeSelector[corev1.LabelHostname] = host
	return nil
}

// HostnameOf is the kubernetes.io/hostname label of a node, which names it
// in node selectors; the node's name when it has none (or is gone: its
// pods then stay pending and the placement is repaired).
func HostnameOf(ctx context.Context, c client.Reader, node string) (string, error) {
	var n corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
		if apierrors.IsNotFound(err) {
			return node, nil
		}
		return "", err
	}
	if h := n.Labels[corev1.LabelHostname]; h != "" {
		return h, nil
	}
	return node, nil
}

// addCheckUpdates adds to a pod set's placement what the workload's Ready
// admission checks add to its pods (their podSetUpdates). A node selector
// key the flavor sets to another value is a conflict.
func addCheckUpdates(wl *musterv1beta1.Workload, info *PodSetInfo) error {
	for _, u := range checkUpdates(wl, info.Name, true) {
		for k, v := range u.NodeSelector {
			if old, ok := info.NodeSelector[k]; ok && old != v {
				return &conflictError{key: k, have: v, want: old}
			}
			info.NodeSelector[k] = v
		}
		for _, t := range u.Tolerations {
			if !containsToleration(info.Tolerations, t) {
				info.Tolerations = append(info.Tolerations, t)
			}
		}
		info.Labels = withAll(info.Labels, u.Labels)
		info.Annotations = withAll(info.Annotations, u.Annotations)
	}
	return nil
}

// checkUpdates are the podSetUpdates of the workload's checks for a pod
// set: of the Ready ones to start a job, of all to restore it (a check
// that turned Retry keeps what it added while the quota is held).
func checkUpdates(wl *musterv1beta1.Workload, podSet string, readyOnly bool) []musterv1beta1.PodSetUpdate {
	var out []musterv1beta1.PodSetUpdate
	for _, c := range wl.Status.AdmissionChecks {
		if readyOnly && c.State != musterv1beta1.CheckStateReady {
			continue
		}
		for _, u := range c.PodSetUpdates {
			if u.Name == podSet {
				out = append(out, u)
			}
		}
	}
	return out
}

func withAll(dst, add map[string]string) map[string]string {
	if len(add) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]string{}
	}
	maps.Copy(dst, add)
	return dst
}

// originalPodSetInfos is the placement the job had before admission, as
// recorded in its Workload's pod templates: the labels and annotations
// admission checks set are given back their values, or dropped.
func originalPodSetInfos(wl *musterv1beta1.Workload) []PodSetInfo {
	infos := make([]PodSetInfo, 0, len(wl.Spec.PodSets))
	for _, ps := range wl.Spec.PodSets {
		info := PodSetInfo{
			Name:         ps.Name,
			Count:        ps.Count,
			NodeSelector: ps.Template.Spec.NodeSelector,
			Tolerations:  ps.Template.Spec.Tolerations,
			Drop:         &MetaKeys{},
		}
		for _, u := range checkUpdates(wl, ps.Name, false) {
			info.Labels, info.Drop.Labels = originalMeta(ps.Template.Labels, u.Labels, info.Labels, info.Drop.Labels)
			info.Annotations, info.Drop.Annotations = originalMeta(ps.Template.Annotations, u.Annotations, info.Annotations, info.Drop.Annotations)
		}
		infos = append(infos, info)
	}
	return infos
}

// originalMeta sorts the keys a check set into those the template had (kept
// with their values) and those it added (dropped).
func originalMeta(template, set, keep map[string]string, drop []string) (map[string]string, []string) {
	for k := range set {
		if v, ok := template[k]; ok {
			keep = withAll(keep, map[string]string{k: v})
		} else {
			drop = append(drop, k)
		}
	}
	return keep, drop
}

func sortedFlavorNames(m map[corev1.ResourceName]musterv1beta1.ResourceFlavorReference) []musterv1beta1.ResourceFlavorReference {
	seen := map[musterv1beta1.ResourceFlavorReference]bool{}
	var names []musterv1beta1.ResourceFlavorReference
	for _, f := range m {
		if !seen[f] {
			seen[f] = true
			names = append(names, f)
		}
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// samePodSets reports whether two pod set lists ask for the same thing:
// names, counts, every container's requests, and the placement (node
// selector, tolerations) that flavor assignment and restore work from.
func samePodSets(a, b []musterv1beta1.PodSet) bool {
	if !sameRequests(a, b) {
		return false
	}
	for i := range a {
		sa, sb := &a[i].Template.Spec, &b[i].Template.Spec
		if !maps.Equal(sa.NodeSelector, sb.NodeSelector) || !equality.Semantic.DeepEqual(sa.Tolerations, sb.Tolerations) ||
			!equality.Semantic.DeepEqual(a[i].TopologyRequest, b[i].TopologyRequest) {
			return false
		}
	}
	return true
}

// sameRequests reports whether two pod set lists ask for the same quota:
// names, counts and every container's requests.
func sameRequests(a, b []musterv1beta1.PodSet) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Count != b[i].Count || !ptr.Equal(a[i].MinCount, b[i].MinCount) ||
			!equality.Semantic.DeepEqual(resourcesOf(&a[i].Template.Spec), resourcesOf(&b[i].Template.Spec)) {
			return false
		}
	}
	return true
}

func resourcesOf(spec *corev1.PodSpec) []corev1.ResourceList {
	var out []corev1.ResourceList
	for _, c := range spec.InitContainers {
		out = append(out, c.Resources.Requests)
	}
	for _, c := range spec.Containers {
		out = append(out, c.Resources.Requests)
	}
	return out
}
