package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
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

// Workload exists only as the parent of its explanation subresource:
// GET namespaces/<ns>/workloads/<name>/explanation.
//
// +kubebuilder:object:root=true
// +k8s:openapi-gen=true
type Workload struct {
	metav1.TypeMeta `json:",inline"`
	// metadata names the Workload.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// WorkloadList is a list of Workload.
//
// +kubebuilder:object:root=true
type WorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the Workloads.
	// +required
	Items []Workload `json:"items"`
}

// Fit says how a pending workload fits its ClusterQueue now.
type Fit string

const (
	// FitFits: it fits the queue's free quota; the next cycle that reaches
	// it admits it, unless those ahead take the room first.
	FitFits Fit = "Fits"
	// FitByBorrowing: it fits by borrowing from the cohort.
	FitByBorrowing Fit = "FitsByBorrowing"
	// FitByPreempting: it fits only once admitted workloads are preempted.
	FitByPreempting Fit = "FitsByPreempting"
	// FitNone: it does not fit now, even by preempting.
	FitNone Fit = "DoesNotFit"
)

// PreemptionState says what preemption would do for a pending workload.
type PreemptionState string

const (
	// PreemptionNotNeeded: it fits without preempting.
	PreemptionNotNeeded PreemptionState = "NotNeeded"
	// PreemptionWouldEvict: the victims listed would be evicted for it.
	PreemptionWouldEvict PreemptionState = "WouldEvict"
	// PreemptionWaitingForEvictions: workloads already being evicted free
	// enough; it waits for them.
	PreemptionWaitingForEvictions PreemptionState = "WaitingForEvictions"
	// PreemptionAfterMinimumRuntime: the victims listed would do once
	// their minimum runtime has passed.
	PreemptionAfterMinimumRuntime PreemptionState = "AfterMinimumRuntime"
	// PreemptionCannotHelp: no set of workloads its policy lets it preempt
	// frees enough.
	PreemptionCannotHelp PreemptionState = "CannotHelp"
)

// WorkloadExplanation is the scheduler's answer to why a pending workload
// waits: its last reason, and the scheduler's own flavor assignment and
// preemption search run for it now, as a cycle that tried it first would.
//
// +kubebuilder:object:root=true
// +k8s:openapi-gen=true
type WorkloadExplanation struct {
	metav1.TypeMeta `json:",inline"`
	// metadata names the Workload.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// clusterQueue is the ClusterQueue the workload waits in; empty while
	// its LocalQueue or ClusterQueue does not exist.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ClusterQueue string `json:"clusterQueue,omitempty"`

	// localQueueName is the LocalQueue the workload was submitted to.
	// +required
	// +kubebuilder:validation:MaxLength=253
	LocalQueueName string `json:"localQueueName"`

	// positionInClusterQueue is the workload's place in its ClusterQueue's
	// order, from 0; absent while it is in no ClusterQueue.
	// +optional
	PositionInClusterQueue *int32 `json:"positionInClusterQueue,omitempty"`

	// positionInLocalQueue is the workload's place among its LocalQueue's
	// pending workloads, from 0.
	// +required
	PositionInLocalQueue int32 `json:"positionInLocalQueue"`

	// reason is why the workload waits, as the scheduler decided in its
	// latest cycle; empty until it has been considered once.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	Reason string `json:"reason,omitempty"`

	// fit is how the workload fits its ClusterQueue now; empty while it is
	// in no ClusterQueue.
	// +optional
	Fit Fit `json:"fit,omitempty"`

	// shortages are, for the first pod set that does not fit, why each
	// flavor was rejected.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Shortages []Shortage `json:"shortages,omitempty"`

	// preemption is what preemption would do for it now.
	// +optional
	Preemption *PreemptionExplanation `json:"preemption,omitempty"`
}

// Shortage is why one flavor was rejected for a pod set.
type Shortage struct {
	// podSet is the pod set that does not fit.
	// +required
	// +kubebuilder:validation:MaxLength=63
	PodSet string `json:"podSet"`
	// flavor is the rejected flavor; empty when the reason is not about
	// one.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Flavor string `json:"flavor,omitempty"`
	// resource is the resource short in the flavor; empty when the reason
	// is not about quota (placement, taints, a flavor missing).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Resource string `json:"resource,omitempty"`
	// requested, available and quota are the amounts of resource: asked by
	// the pod set, free to it now (borrowing included), and the queue's
	// nominal quota.
	// +optional
	Requested *resource.Quantity `json:"requested,omitempty"`
	// +optional
	Available *resource.Quantity `json:"available,omitempty"`
	// +optional
	Quota *resource.Quantity `json:"quota,omitempty"`
	// never is true when waiting cannot help: the flavor cannot hold the
	// pod set even when its queue is empty.
	// +optional
	Never bool `json:"never,omitempty"`
	// message is the reason in words.
	// +required
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message"`
}

// PreemptionExplanation is what the scheduler's preemption search found.
type PreemptionExplanation struct {
	// state is what preemption would do.
	// +required
	State PreemptionState `json:"state"`
	// message says it in words, with what stands in the way when
	// preemption cannot help.
	// +required
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message"`
	// victims are the admitted workloads it would evict (or waits for),
	// in the order the search picked them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	Victims []PreemptionVictim `json:"victims,omitempty"`
}

// PreemptionVictim is one workload preemption would evict.
type PreemptionVictim struct {
	// name and namespace name the victim's Workload.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +required
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// clusterQueue is the victim's ClusterQueue.
	// +required
	// +kubebuilder:validation:MaxLength=253
	ClusterQueue string `json:"clusterQueue"`
	// priority is the victim's priority.
	// +required
	Priority int32 `json:"priority"`
	// reason is why it may be preempted (InClusterQueue,
	// InCohortReclamation, InCohortReclaimWhileBorrowing,
	// InCohortFairSharing); empty for a workload already being evicted.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason,omitempty"`
}
