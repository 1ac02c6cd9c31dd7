package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterQueue exists only as the parent of its pendingworkloads
// subresource: GET .../clusterqueues/<name>/pendingworkloads.
//
// +kubebuilder:object:root=true
// +k8s:openapi-gen=true
type ClusterQueue struct {
	metav1.TypeMeta `json:",inline"`
	// metadata names the ClusterQueue.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// pendingWorkloadsSummary lists the queue's pending workloads.
	// +optional
	Summary PendingWorkloadsSummary `json:"pendingWorkloadsSummary,omitempty"`
}

// ClusterQueueList is a list of ClusterQueue.
//
// +kubebuilder:object:root=true
type ClusterQueueList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterQueues.
	// +required
	Items []ClusterQueue `json:"items"`
}

// LocalQueue exists only as the parent of its pendingworkloads
// subresource: GET namespaces/<ns>/localqueues/<name>/pendingworkloads.
//
// +kubebuilder:object:root=true
// +k8s:openapi-gen=true
type LocalQueue struct {
	metav1.TypeMeta `json:",inline"`
	// metadata names the LocalQueue.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// pendingWorkloadsSummary lists the queue's pending workloads.
	// +optional
	Summary PendingWorkloadsSummary `json:"pendingWorkloadsSummary,omitempty"`
}

// LocalQueueList is a list of LocalQueue.
//
// +kubebuilder:object:root=true
type LocalQueueList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the LocalQueues.
	// +required
	Items []LocalQueue `json:"items"`
}

// PendingWorkload is one pending Workload as its ClusterQueue orders it.
type PendingWorkload struct {
	// metadata is the Workload's name, namespace, owners and creation time.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// priority is the workload's priority.
	// +required
	Priority int32 `json:"priority"`

	// localQueueName is the LocalQueue the workload was submitted to.
	// +required
	// +kubebuilder:validation:MaxLength=253
	LocalQueueName string `json:"localQueueName"`

	// positionInClusterQueue is the workload's place in its ClusterQueue's
	// order (priority, then age), from 0. Under fair sharing the cohort's
	// tournament decides between queues; this is the order within one.
	// +required
	PositionInClusterQueue int32 `json:"positionInClusterQueue"`

	// positionInLocalQueue is the workload's place among its LocalQueue's
	// pending workloads, from 0.
	// +required
	PositionInLocalQueue int32 `json:"positionInLocalQueue"`

	// reason is why the workload waits, as the scheduler decided in its
	// latest cycle; empty until it has been considered once. The Workload's
	// QuotaReserved condition gets the same text, later and less often.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	Reason string `json:"reason,omitempty"`
}

// PendingWorkloadsSummary lists pending workloads of a ClusterQueue or a
// LocalQueue, in queue order.
//
// +kubebuilder:object:root=true
// +k8s:openapi-gen=true
type PendingWorkloadsSummary struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// items are the pending workloads from offset, at most limit of them.
	// +required
	Items []PendingWorkload `json:"items"`
}

// PendingWorkloadOptions are the query parameters of pendingworkloads.
//
// +kubebuilder:object:root=true
// +k8s:openapi-gen=true
type PendingWorkloadOptions struct {
	metav1.TypeMeta `json:",inline"`

	// offset is the position of the first workload returned, from 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Offset int64 `json:"offset,omitempty"`

	// limit is the most workloads returned (DefaultLimit if unset, at most
	// MaxLimit).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Limit int64 `json:"limit,omitempty"`
}
