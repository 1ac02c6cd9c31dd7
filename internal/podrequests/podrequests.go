// Package podrequests computes what the pods made from a pod template will
// really request once the API server has admitted them, so that quota is
// charged for what kubelet reserves and not for what the template happens to
// spell out. A pod template is not a Pod: the API server applies none of the
// following to it, only to the Pods a job controller creates from it later.
//
// The steps, in the API server's order:
//  1. Defaulting (SetDefaults_Pod): a container's limits fill its missing
//     requests, for every resource; pod-level limits fill missing pod-level
//     requests the same way.
//  2. The LimitRanger admission plugin: each LimitRange of the namespace
//     fills a container's missing limits from its Container item's
//     default, and missing requests from its defaultRequest.
//  3. The RuntimeClass admission plugin: the RuntimeClass's pod overhead is
//     set on a pod that names the class.
//
// Init containers, sidecars and overhead are then summed by
// k8s.io/component-helpers' PodRequests, as kubelet and kube-scheduler do.
//
// The package is pure: callers fetch the LimitRanges and the overhead.
package podrequests

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Effective returns a copy of spec with the requests, limits and overhead
// its pods will be admitted with. limitRanges are the LimitRanges of the
// pods' namespace, in any order (the first to set a value wins, as the
// admission plugin does); overhead is the pod overhead of the pod's
// RuntimeClass, or nil.
func Effective(spec *corev1.PodSpec, limitRanges []corev1.LimitRange, overhead corev1.ResourceList) *corev1.PodSpec {
	out := spec.DeepCopy()
	containers := [][]corev1.Container{out.InitContainers, out.Containers}
	for _, cs := range containers {
		for i := range cs {
			limitsFillRequests(&cs[i].Resources)
		}
	}
	if out.Resources != nil {
		podLevelLimitsFillRequests(out)
	}
	for _, cs := range containers {
		for i := range cs {
			for j := range limitRanges {
				applyLimitRange(&cs[i].Resources, &limitRanges[j])
			}
		}
	}
	if out.RuntimeClassName != nil && out.Overhead == nil && len(overhead) > 0 {
		out.Overhead = overhead.DeepCopy()
	}
	return out
}

// PerPod returns what one pod of spec requests, resource by resource, once
// admitted (see Effective), with init containers, sidecars and overhead.
func PerPod(spec *corev1.PodSpec, limitRanges []corev1.LimitRange, overhead corev1.ResourceList) corev1.ResourceList {
	pod := &corev1.Pod{Spec: *Effective(spec, limitRanges, overhead)}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// limitsFillRequests is the API server's defaulting of a container: a
// resource with a limit and no request requests its limit.
func limitsFillRequests(r *corev1.ResourceRequirements) {
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; ok {
			continue
		}
		if r.Requests == nil {
			r.Requests = corev1.ResourceList{}
		}
		r.Requests[name] = limit.DeepCopy()
	}
}

// applyLimitRange is the LimitRanger plugin's defaulting of a container by
// one LimitRange. The API server stores LimitRanges with defaultRequest
// already defaulted from default (and default from max), so the two lists
// are all that is needed.
func applyLimitRange(r *corev1.ResourceRequirements, lr *corev1.LimitRange) {
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		r.Limits = fillMissing(r.Limits, item.Default)
		r.Requests = fillMissing(r.Requests, item.DefaultRequest)
	}
}

func fillMissing(have, defaults corev1.ResourceList) corev1.ResourceList {
	for name, v := range defaults {
		if _, ok := have[name]; ok {
			continue
		}
		if have == nil {
			have = corev1.ResourceList{}
		}
		have[name] = v.DeepCopy()
	}
	return have
}

// podLevelLimitsFillRequests defaults pod-level requests from pod-level
// limits for the resources no container requests (the API server's rule for
// pod-level resources: where containers request a resource, their sum is the
// pod's request, which PodRequests computes anyway). Only the resources
// pod-level resources support (cpu, memory, hugepages) are defaulted.
func podLevelLimitsFillRequests(spec *corev1.PodSpec) {
	res := spec.Resources
	for name, limit := range res.Limits {
		if _, ok := res.Requests[name]; ok || !resourcehelper.IsSupportedPodLevelResource(name) || containersRequest(spec, name) {
			continue
		}
		if res.Requests == nil {
			res.Requests = corev1.ResourceList{}
		}
		res.Requests[name] = limit.DeepCopy()
	}
}

func containersRequest(spec *corev1.PodSpec, name corev1.ResourceName) bool {
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			if _, ok := cs[i].Resources.Requests[name]; ok {
				return true
			}
		}
	}
	return false
}
