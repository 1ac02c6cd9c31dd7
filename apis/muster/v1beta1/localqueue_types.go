package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocalQueueSpec binds a namespaced queue to a ClusterQueue.
type LocalQueueSpec struct {
	// clusterQueue is the ClusterQueue whose quota this queue's workloads use.
	// It cannot change: workloads already admitted hold quota there.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterQueue is immutable"
	// +required
	ClusterQueue ClusterQueueReference `json:"clusterQueue"`

	// stopPolicy stops the queue: Hold admits nothing new from it,
	// HoldAndDrain also evicts what it had admitted.
	// +optional
	// +kubebuilder:default=None
	StopPolicy *StopPolicy `json:"stopPolicy,omitempty"`

	// fairSharing sets the queue's weight under its ClusterQueue's admission
	// fair sharing: a LocalQueue of weight 2 may use twice as much before
	// it counts as equally served.
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`
}

// LocalQueueStatus reports the state of a LocalQueue.
type LocalQueueStatus struct {
	// conditions of the queue: Active says whether it accepts workloads, and why not.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`

	// pendingWorkloads is the number of this queue's workloads waiting for quota.
	// +optional
	PendingWorkloads int32 `json:"pendingWorkloads"`

	// reservingWorkloads is the number of this queue's workloads holding quota.
	// +optional
	ReservingWorkloads int32 `json:"reservingWorkloads"`

	// admittedWorkloads is the number of this queue's workloads admitted.
	// +optional
	AdmittedWorkloads int32 `json:"admittedWorkloads"`

	// flavorsReservation is the quota reserved by this queue's workloads.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	FlavorsReservation []FlavorUsage `json:"flavorsReservation,omitempty"`

	// flavorsUsage is the quota used by this queue's admitted workloads.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	FlavorsUsage []FlavorUsage `json:"flavorsUsage,omitempty"`

	// fairSharing is, under its ClusterQueue's admission fair sharing, the
	// queue's weighted usage in thousandths (weightedShare: the sum over
	// resources of the weighted usage, decayed when usage decay is on,
	// divided by its weight; lower goes first), and with usage decay on its
	// decayed usage, which a restarted manager continues from.
	// +optional
	FairSharing *FairSharingStatus `json:"fairSharing,omitempty"`
}

const (
	// LocalQueueActive is True when the queue's ClusterQueue exists and is
	// active.
	LocalQueueActive = "Active"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=lq;queue
// +kubebuilder:printcolumn:name="ClusterQueue",type=string,JSONPath=".spec.clusterQueue"
// +kubebuilder:printcolumn:name="Pending",type=integer,JSONPath=".status.pendingWorkloads"
// +kubebuilder:printcolumn:name="Admitted",type=integer,JSONPath=".status.admittedWorkloads"
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=".status.conditions[?(@.type==\"Active\")].status",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"

// LocalQueue is where users of a namespace submit jobs; it feeds a
// ClusterQueue.
type LocalQueue struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the LocalQueue.
	// +required
	Spec LocalQueueSpec `json:"spec"`
	// status is the observed state of the LocalQueue.
	// +optional
	Status LocalQueueStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// LocalQueueList is a list of LocalQueues.
type LocalQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalQueue `json:"items"`
}

func init() {
	register(&LocalQueue{}, &LocalQueueList{})
}
