package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
)

// This file translates API objects into the core's model and back.

func toFlavor(rf *musterv1beta1.ResourceFlavor) *core.Flavor {
	f := &core.Flavor{Name: rf.Name, NodeLabels: rf.Spec.NodeLabels}
	for _, t := range rf.Spec.NodeTaints {
		f.Taints = append(f.Taints, core.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	f.Tolerations = toTolerations(rf.Spec.Tolerations)
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
	out := &core.ClusterQueue{Name: cq.Name, Cohort: string(cq.Spec.Cohort)}
	if cq.Spec.QueueingStrategy == musterv1beta1.StrictFIFO {
		out.Strategy = core.StrictFIFO
	}
	if cq.Spec.StopPolicy != nil {
		switch *cq.Spec.StopPolicy {
		case musterv1beta1.Hold:
			out.Stop = core.Hold
		case musterv1beta1.HoldAndDrain:
			out.Stop = core.HoldAndDrain
		}
	}
	// A ClusterQueue being deleted admits nothing new.
	if !cq.DeletionTimestamp.IsZero() {
		out.Stop = core.Hold
	}
	for _, g := range cq.Spec.ResourceGroups {
		cg := core.ResourceGroup{}
		for _, r := range g.CoveredResources {
			cg.Resources = append(cg.Resources, string(r))
		}
		for _, f := range g.Flavors {
			fq := core.FlavorQuotas{Flavor: string(f.Name), Resources: map[string]core.ResourceQuota{}}
			for _, r := range f.Resources {
				fq.Resources[string(r.Name)] = core.ResourceQuota{
					Nominal:        r.NominalQuota.MilliValue(),
					BorrowingLimit: milliPtr(r.BorrowingLimit),
					LendingLimit:   milliPtr(r.LendingLimit),
				}
			}
			cg.Flavors = append(cg.Flavors, fq)
		}
		out.ResourceGroups = append(out.ResourceGroups, cg)
	}
	return out
}

func milliPtr(q *resource.Quantity) *int64 {
	if q == nil {
		return nil
	}
	v := q.MilliValue()
	return &v
}

// toWorkload builds the core's view of a Workload: per-pod requests
// computed as the kubelet would (init containers, sidecars, overhead).
func toWorkload(wl *musterv1beta1.Workload) *core.Workload {
	out := &core.Workload{
		Key:       wl.Namespace + "/" + wl.Name,
		Namespace: wl.Namespace,
		Name:      wl.Name,
		Queue:     string(wl.Spec.QueueName),
		Created:   wl.CreationTimestamp.Time,
	}
	if wl.Spec.Priority != nil {
		out.Priority = *wl.Spec.Priority
	}
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		pod := &corev1.Pod{Spec: ps.Template.Spec}
		reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		cps := core.PodSet{
			Name:         ps.Name,
			Count:        ps.Count,
			Requests:     core.Requests{},
			NodeSelector: ps.Template.Spec.NodeSelector,
			Tolerations:  toTolerations(ps.Template.Spec.Tolerations),
		}
		for name, q := range reqs {
			cps.Requests[string(name)] = q.MilliValue()
		}
		out.PodSets = append(out.PodSets, cps)
	}
	if adm := wl.Status.Admission; adm != nil {
		out.Admission = toAdmission(adm)
	}
	return out
}

func toAdmission(adm *musterv1beta1.Admission) *core.Admission {
	out := &core.Admission{ClusterQueue: string(adm.ClusterQueue)}
	for _, psa := range adm.PodSetAssignments {
		a := core.PodSetAssignment{Name: psa.Name, Flavors: map[string]string{}, Usage: core.Requests{}}
		if psa.Count != nil {
			a.Count = *psa.Count
		}
		for res, f := range psa.Flavors {
			a.Flavors[string(res)] = string(f)
		}
		for res, q := range psa.ResourceUsage {
			a.Usage[string(res)] = q.MilliValue()
		}
		out.PodSets = append(out.PodSets, a)
	}
	return out
}

func fromAdmission(adm *core.Admission) *musterv1beta1.Admission {
	out := &musterv1beta1.Admission{ClusterQueue: musterv1beta1.ClusterQueueReference(adm.ClusterQueue)}
	for _, psa := range adm.PodSets {
		a := musterv1beta1.PodSetAssignment{
			Name:          psa.Name,
			Flavors:       map[corev1.ResourceName]musterv1beta1.ResourceFlavorReference{},
			ResourceUsage: corev1.ResourceList{},
			Count:         &psa.Count,
		}
		for res, f := range psa.Flavors {
			a.Flavors[corev1.ResourceName(res)] = musterv1beta1.ResourceFlavorReference(f)
		}
		for res, v := range psa.Usage {
			a.ResourceUsage[corev1.ResourceName(res)] = resource.MustParse(core.Format(res, v))
		}
		out.PodSetAssignments = append(out.PodSetAssignments, a)
	}
	return out
}

// isFinished reports whether the workload's job finished.
func isFinished(wl *musterv1beta1.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadFinished)
}

// isActive reports whether the workload may be queued.
func isActive(wl *musterv1beta1.Workload) bool {
	return wl.Spec.Active == nil || *wl.Spec.Active
}

func toFlavorUsage(u core.Usage) []musterv1beta1.FlavorUsage {
	byFlavor := map[string][]musterv1beta1.ResourceUsage{}
	var flavors []string
	for fr, v := range u {
		if _, ok := byFlavor[fr.Flavor]; !ok {
			flavors = append(flavors, fr.Flavor)
		}
		byFlavor[fr.Flavor] = append(byFlavor[fr.Flavor], musterv1beta1.ResourceUsage{
			Name: corev1.ResourceName(fr.Resource), Total: resource.MustParse(core.Format(fr.Resource, v)),
		})
	}
	sortStrings(flavors)
	out := make([]musterv1beta1.FlavorUsage, 0, len(flavors))
	for _, f := range flavors {
		rs := byFlavor[f]
		sortResourceUsage(rs)
		out = append(out, musterv1beta1.FlavorUsage{Name: musterv1beta1.ResourceFlavorReference(f), Resources: rs})
	}
	return out
}
