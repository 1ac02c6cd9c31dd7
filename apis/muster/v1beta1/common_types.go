package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// QueueNameLabel is the label by which a job names the LocalQueue it is
	// submitted to.
	QueueNameLabel = "muster.dev/queue-name"
	// KueueQueueNameLabel is Kueue's queue label. Muster accepts it too (unless
	// switched off in the component config) so that jobs written for Kueue run
	// unchanged.
	KueueQueueNameLabel = "kueue.x-k8s.io/queue-name"

	// AdmissionSchedulingGate holds a queued plain Pod until its Workload
	// is admitted: a Pod cannot be suspended, so the pod webhook gates it
	// when it is created and the job reconciler removes the gate on
	// admission (Kueue's kueue.x-k8s.io/admission).
	AdmissionSchedulingGate = "muster.dev/admission"
	// WorkloadPriorityClassLabel names the WorkloadPriorityClass of a job.
	WorkloadPriorityClassLabel = "muster.dev/priority-class"
	// ResourceInUseFinalizer keeps an object whose quota is still used from
	// going away under it: a Workload whose job has not stopped yet, or a
	// ClusterQueue or ResourceFlavor that admitted workloads still use.
	ResourceInUseFinalizer = "muster.dev/resource-in-use"
	// JobCreatedAtAnnotation records, on a Workload, when its job was
	// created (RFC 3339). The job's place in its queue counts from then, not
	// from when Muster got round to creating the Workload: jobs submitted
	// while Muster was starting keep their order.
	JobCreatedAtAnnotation = "muster.dev/job-created-at"
	// PodFailuresToleratedAnnotation records, on a Workload, how many more
	// of its job's pods may fail before the job fails (for a batch/v1 Job:
	// backoffLimit minus the failures so far, unless a podFailurePolicy
	// ignores disruptions). Absent: no bound is known. When a node of its
	// placement fails and the pods there exceed it, the job is requeued
	// whole instead of its pods being moved (they would count as failures).
	PodFailuresToleratedAnnotation = "muster.dev/pod-failures-tolerated"
	// PrebuiltWorkloadAnnotation names, on a job, the Workload that
	// already exists for it: the job reconciler adopts that one instead of
	// creating its own (how a worker cluster runs a job a manager
	// dispatched). An annotation, as Kueue writes it, for a Workload's name
	// can be longer than a label value; the label of the same key is read
	// too.
	PrebuiltWorkloadAnnotation = "muster.dev/prebuilt-workload-name"
	// KueuePrebuiltWorkloadAnnotation is Kueue's key for the same
	// (annotation or label).
	KueuePrebuiltWorkloadAnnotation = "kueue.x-k8s.io/prebuilt-workload-name"
	// ReservationAnnotation records, on what an admission check creates
	// for a workload (a ProvisioningRequest, a worker cluster's copy), the
	// reservation it was made for, so that one made for an earlier
	// reservation is never taken for the current one's.
	ReservationAnnotation = "muster.dev/reservation"
	// MultiClusterOriginLabel marks, in a worker cluster, the objects a
	// manager cluster's Muster created there; its value is the manager's
	// origin (its configuration's multiCluster.origin).
	MultiClusterOriginLabel = "muster.dev/multicluster-origin"
)

// ResourceFlavorReference is the name of a ResourceFlavor.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type ResourceFlavorReference string

// ClusterQueueReference is the name of a ClusterQueue.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type ClusterQueueReference string

// CohortReference is the name of a cohort. A cohort exists as soon as a
// ClusterQueue or Cohort names it; a Cohort object only adds quota, a parent
// or a weight.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type CohortReference string

// LocalQueueName is the name of a LocalQueue in the workload's namespace.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type LocalQueueName string

// ResourceGroup is a set of resources that are assigned flavors together: a
// pod set gets one flavor for all the covered resources of a group (for
// example the GPUs and the CPUs of the same machine type).
//
// +kubebuilder:validation:XValidation:rule="self.flavors.all(f, size(f.resources) == size(self.coveredResources) && f.resources.all(r, r.name in self.coveredResources))",message="each flavor must list exactly the coveredResources of its group"
type ResourceGroup struct {
	// coveredResources lists the resources whose quota this group defines.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +required
	CoveredResources []corev1.ResourceName `json:"coveredResources"`

	// flavors lists the flavors of the group in the order they are tried.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +required
	Flavors []FlavorQuotas `json:"flavors"`
}

// FlavorQuotas is the quota of one flavor for the covered resources of a group.
type FlavorQuotas struct {
	// name of the ResourceFlavor.
	// +required
	Name ResourceFlavorReference `json:"name"`

	// resources holds the quota of each covered resource.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +required
	Resources []ResourceQuota `json:"resources"`
}

// ResourceQuota is the quota of one resource in one flavor. Negative
// quantities and a lendingLimit above nominalQuota are rejected by the
// ClusterQueue and Cohort validating webhooks: CEL cannot parse quantity
// strings within the cost budget of a list nested three deep.
type ResourceQuota struct {
	// name of the resource, e.g. cpu, memory or nvidia.com/gpu.
	// +required
	Name corev1.ResourceName `json:"name"`

	// nominalQuota is how much of the resource this queue guarantees to its
	// workloads. Unused nominal quota can be lent to the cohort.
	// +required
	NominalQuota resource.Quantity `json:"nominalQuota"`

	// borrowingLimit is how much more than nominalQuota the queue may borrow
	// from its cohort. Unset means no limit; zero forbids borrowing. Only
	// allowed in a cohort.
	// +optional
	BorrowingLimit *resource.Quantity `json:"borrowingLimit,omitempty"`

	// lendingLimit is how much of the unused nominalQuota the cohort may
	// borrow. Unset means all of it. Only allowed in a cohort.
	// +optional
	LendingLimit *resource.Quantity `json:"lendingLimit,omitempty"`
}

// FairSharing configures a queue's or cohort's place in DRF fair sharing.
type FairSharing struct {
	// weight scales the queue's share: a queue of weight 2 may use twice the
	// borrowed resources of a queue of weight 1 before it counts as equally
	// served. Zero means the queue borrows only what nobody else wants.
	// +optional
	// +kubebuilder:default="1"
	// +kubebuilder:validation:XValidation:rule="!string(self).startsWith('-')",message="weight must not be negative"
	Weight *resource.Quantity `json:"weight,omitempty"`
}

// FairSharingStatus reports the share of a queue or cohort.
type FairSharingStatus struct {
	// weightedShare is the largest, over resources, of the queue's usage above
	// its nominal quota divided by what the cohort can lend, in thousandths,
	// divided by the weight. 0 means the queue borrows nothing.
	// +required
	WeightedShare int64 `json:"weightedShare"`

	// decayedUsage is the usage averaged over time with the half-life of
	// fairSharing.usage (the component configuration), per flavor and
	// resource, as of lastSampled: what the fair-sharing tournament orders
	// by when usage decay is on. Kept here so that a restarted manager
	// continues from it. Empty without usage decay.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	DecayedUsage []FlavorUsage `json:"decayedUsage,omitempty"`

	// lastSampled is when decayedUsage was last sampled.
	// +optional
	LastSampled *metav1.Time `json:"lastSampled,omitempty"`
}

// StopPolicy stops a queue.
// +kubebuilder:validation:Enum=None;Hold;HoldAndDrain
type StopPolicy string

const (
	// None: the queue works normally.
	None StopPolicy = "None"
	// Hold: the queue admits nothing new; admitted workloads keep running.
	Hold StopPolicy = "Hold"
	// HoldAndDrain: the queue admits nothing new and evicts what it admitted.
	HoldAndDrain StopPolicy = "HoldAndDrain"
)

// ResourceUsage is the usage of one resource.
type ResourceUsage struct {
	// name of the resource.
	// +required
	Name corev1.ResourceName `json:"name"`
	// total is the quantity in use.
	// +required
	Total resource.Quantity `json:"total,omitempty"`
	// borrowed is the part of total above the queue's nominal quota.
	// +optional
	Borrowed resource.Quantity `json:"borrowed,omitempty"`
}

// FlavorUsage is the usage of the resources of one flavor.
type FlavorUsage struct {
	// name of the flavor.
	// +required
	Name ResourceFlavorReference `json:"name"`
	// resources lists the usage of each resource of the flavor.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +required
	Resources []ResourceUsage `json:"resources"`
}
