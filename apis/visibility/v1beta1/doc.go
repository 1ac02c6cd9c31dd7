// Package v1beta1 contains visibility.muster.dev/v1beta1: the read-only
// aggregated API the manager serves from its in-memory queues, so that
// users see where their workloads wait, and why, without a write to the
// API server. It has the shape of Kueue's visibility API
// (visibility.kueue.x-k8s.io) with the pending reason added.
//
// +kubebuilder:object:generate=true
// +kubebuilder:skip
// +groupName=visibility.muster.dev
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=dev.muster.visibility.v1beta1
package v1beta1
