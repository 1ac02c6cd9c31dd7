package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterQueueSpec defines the quota of a ClusterQueue and how it queues,
// borrows and preempts.
//
// +kubebuilder:validation:XValidation:rule="(has(self.cohort) && size(self.cohort) > 0) || !has(self.resourceGroups) || self.resourceGroups.all(g, g.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit))))",message="borrowingLimit is only allowed in a cohort"
// +kubebuilder:validation:XValidation:rule="(has(self.cohort) && size(self.cohort) > 0) || !has(self.resourceGroups) || self.resourceGroups.all(g, g.flavors.all(f, f.resources.all(r, !has(r.lendingLimit))))",message="lendingLimit is only allowed in a cohort"
// +kubebuilder:validation:XValidation:rule="!has(self.resourceGroups) || self.resourceGroups.all(g1, g1.flavors.all(f1, self.resourceGroups.filter(g2, g2.flavors.exists(f2, f2.name == f1.name)).size() == 1))",message="a flavor may appear in only one resource group"
// +kubebuilder:validation:XValidation:rule="!has(self.resourceGroups) || self.resourceGroups.all(g1, g1.coveredResources.all(r, self.resourceGroups.filter(g2, r in g2.coveredResources).size() == 1))",message="a resource may be covered by only one resource group"
// +kubebuilder:validation:XValidation:rule="!(has(self.admissionChecks) && size(self.admissionChecks) > 0 && has(self.admissionChecksStrategy))",message="either admissionChecks or admissionChecksStrategy can be set, not both"
type ClusterQueueSpec struct {
	// resourceGroups define the quota, per flavor, of the resources the
	// queue's workloads may use. A workload requesting a resource no group
	// covers is not admitted.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`

	// cohort is the cohort this queue shares unused quota with. Queues of the
	// same cohort lend each other what they do not use, within the borrowing
	// and lending limits.
	// +optional
	Cohort CohortReference `json:"cohort,omitempty"`

	// queueingStrategy orders the queue's pending workloads. StrictFIFO
	// admits in order and waits for the head; BestEffortFIFO lets later
	// workloads that fit pass one that does not.
	// +optional
	// +kubebuilder:default=BestEffortFIFO
	QueueingStrategy QueueingStrategy `json:"queueingStrategy,omitempty"`

	// namespaceSelector selects the namespaces whose LocalQueues may submit
	// to this queue. Unset selects none; an empty selector selects all.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// flavorFungibility says when to stop at a flavor that fits only by
	// borrowing or preempting, rather than try the next one.
	// +optional
	// +kubebuilder:default={}
	FlavorFungibility *FlavorFungibility `json:"flavorFungibility,omitempty"`

	// preemption says which admitted workloads a pending one may evict.
	// +optional
	// +kubebuilder:default={}
	Preemption *ClusterQueuePreemption `json:"preemption,omitempty"`

	// stopPolicy stops the queue: Hold admits nothing new, HoldAndDrain also
	// evicts what is admitted.
	// +optional
	// +kubebuilder:default=None
	StopPolicy *StopPolicy `json:"stopPolicy,omitempty"`

	// fairSharing sets the queue's weight when fair sharing is enabled.
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`

	// gangScheduling names the gang scheduler that binds the pods of the
	// jobs this queue admits, overriding the manager's default.
	// +optional
	GangScheduling *GangScheduling `json:"gangScheduling,omitempty"`

	// admissionScope turns on fair sharing between the queue's LocalQueues
	// (Kueue's admission fair sharing).
	// +optional
	AdmissionScope *AdmissionScope `json:"admissionScope,omitempty"`

	// starvation holds room for workloads that have waited too long, so
	// that a large job is not passed forever by smaller ones.
	// +optional
	Starvation *StarvationPolicy `json:"starvation,omitempty"`

	// maximumExecutionTimeSeconds is the runtime bound, in seconds, of the
	// queue's workloads that set none of their own: a workload admitted
	// longer (over all its admissions) is deactivated. It also makes them
	// bounded for backfill into room held for a starving workload. Unset:
	// unbounded.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaximumExecutionTimeSeconds *int32 `json:"maximumExecutionTimeSeconds,omitempty"`

	// admissionChecks are the checks every workload of the queue must
	// pass, after it reserves quota, before it is admitted (and its job
	// runs). A check that does not exist or is not Active makes the queue
	// inactive.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	AdmissionChecks []AdmissionCheckReference `json:"admissionChecks,omitempty"`

	// admissionChecksStrategy is admissionChecks with the flavors each
	// check applies to; set one or the other.
	// +optional
	AdmissionChecksStrategy *AdmissionChecksStrategy `json:"admissionChecksStrategy,omitempty"`
}

// AdmissionScope says how the queue orders its LocalQueues' workloads.
type AdmissionScope struct {
	// admissionMode UsageBasedAdmissionFairSharing tries first the
	// workloads of the LocalQueue that has used the least (decayed over time
	// with the manager's fairSharing.usage, current usage without it),
	// weighted per resource and divided by the LocalQueue's
	// fairSharing.weight; priority and age order each LocalQueue's own.
	// NoAdmissionFairSharing (the default) orders by priority and age only.
	// Kueue's field, with Kueue's meaning.
	// +required
	AdmissionMode AdmissionMode `json:"admissionMode"`
}

// AdmissionMode is how a ClusterQueue orders its LocalQueues' workloads.
// +kubebuilder:validation:Enum=UsageBasedAdmissionFairSharing;NoAdmissionFairSharing
type AdmissionMode string

const (
	UsageBasedAdmissionFairSharing AdmissionMode = "UsageBasedAdmissionFairSharing"
	NoAdmissionFairSharing         AdmissionMode = "NoAdmissionFairSharing"
)

// StarvationPolicy is when room is held for a waiting workload.
// +kubebuilder:validation:XValidation:rule="!has(self.yieldAfterSeconds) || self.yieldAfterSeconds == 0 || !has(self.afterSeconds) || self.yieldAfterSeconds > self.afterSeconds",message="yieldAfterSeconds must be more than afterSeconds (or 0: held room never yields)"
type StarvationPolicy struct {
	// afterSeconds is how long, in seconds, a workload waits in the queue
	// before the quota it needs is held for it as it frees: later workloads
	// of the queue and borrowers of the cohort may not take it, except
	// those whose maximum execution time ends before the held room would
	// be enough (backfill). Unset or 0: no room is ever held (Kueue's
	// behaviour).
	// +optional
	// +kubebuilder:validation:Minimum=0
	AfterSeconds *int32 `json:"afterSeconds,omitempty"`

	// yieldAfterSeconds bounds what held room may cost the workloads
	// behind it: one that has waited this long, in seconds from its
	// creation, may use the room held for a starving workload as a backfill
	// would. Unset: ten times afterSeconds (5 hours for 30 minutes), the
	// setting the starvation simulation supports (docs/fairness.md). 0: the
	// held room never yields, however long the others wait.
	// +optional
	// +kubebuilder:validation:Minimum=0
	YieldAfterSeconds *int32 `json:"yieldAfterSeconds,omitempty"`
}

// QueueingStrategy orders the pending workloads of a ClusterQueue.
// +kubebuilder:validation:Enum=StrictFIFO;BestEffortFIFO
type QueueingStrategy string

const (
	// StrictFIFO admits workloads in priority and creation order; a head that
	// does not fit blocks the workloads behind it.
	StrictFIFO QueueingStrategy = "StrictFIFO"
	// BestEffortFIFO admits in the same order, but a workload that does not
	// fit is set aside until quota frees up, and later workloads may pass it.
	BestEffortFIFO QueueingStrategy = "BestEffortFIFO"
)

// FlavorFungibility decides whether a workload that fits a flavor only by
// borrowing or preemption takes it or tries the next flavor first.
type FlavorFungibility struct {
	// whenCanBorrow is what a flavor that fits only by borrowing gets: Borrow takes the flavor; TryNextFlavor first looks for a
	// flavor that fits without borrowing.
	// +optional
	// +kubebuilder:validation:Enum=Borrow;TryNextFlavor
	// +kubebuilder:default=Borrow
	WhenCanBorrow FlavorFungibilityPolicy `json:"whenCanBorrow,omitempty"`

	// whenCanPreempt is what a flavor that fits only by preempting gets: Preempt evicts workloads to fit on the flavor;
	// TryNextFlavor first looks for a flavor that fits without preemption.
	// +optional
	// +kubebuilder:validation:Enum=Preempt;TryNextFlavor
	// +kubebuilder:default=TryNextFlavor
	WhenCanPreempt FlavorFungibilityPolicy `json:"whenCanPreempt,omitempty"`
}

// FlavorFungibilityPolicy is the choice of FlavorFungibility.
type FlavorFungibilityPolicy string

const (
	Borrow        FlavorFungibilityPolicy = "Borrow"
	Preempt       FlavorFungibilityPolicy = "Preempt"
	TryNextFlavor FlavorFungibilityPolicy = "TryNextFlavor"
)

// PreemptionPolicy says which workloads may be preempted.
type PreemptionPolicy string

const (
	// PreemptionPolicyNever never preempts.
	PreemptionPolicyNever PreemptionPolicy = "Never"
	// PreemptionPolicyLowerPriority preempts workloads of lower priority.
	PreemptionPolicyLowerPriority PreemptionPolicy = "LowerPriority"
	// PreemptionPolicyLowerOrNewerEqualPriority also preempts workloads of
	// equal priority that were created later.
	PreemptionPolicyLowerOrNewerEqualPriority PreemptionPolicy = "LowerOrNewerEqualPriority"
	// PreemptionPolicyAny preempts any workload.
	PreemptionPolicyAny PreemptionPolicy = "Any"
)

// ClusterQueuePreemption says when a pending workload may evict admitted ones.
//
// +kubebuilder:validation:XValidation:rule="!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) && self.borrowWithinCohort.policy != 'Never')",message="borrowWithinCohort requires reclaimWithinCohort other than Never"
type ClusterQueuePreemption struct {
	// reclaimWithinCohort says whether a workload that fits in this queue's
	// nominal quota may evict workloads of other queues in the cohort that
	// borrow it. Never, LowerPriority (only lower-priority ones) or Any.
	// +optional
	// +kubebuilder:validation:Enum=Never;LowerPriority;Any
	// +kubebuilder:default=Never
	ReclaimWithinCohort PreemptionPolicy `json:"reclaimWithinCohort,omitempty"`

	// borrowWithinCohort says whether a workload that must borrow may evict
	// lower-priority workloads of other queues in the cohort to do so.
	// +optional
	BorrowWithinCohort *BorrowWithinCohort `json:"borrowWithinCohort,omitempty"`

	// withinClusterQueue says whether a workload that does not fit may evict
	// workloads of its own queue. Never, LowerPriority or
	// LowerOrNewerEqualPriority.
	// +optional
	// +kubebuilder:validation:Enum=Never;LowerPriority;LowerOrNewerEqualPriority
	// +kubebuilder:default=Never
	WithinClusterQueue PreemptionPolicy `json:"withinClusterQueue,omitempty"`

	// minRuntimeSeconds is how long, in seconds, a workload admitted to
	// this queue runs before it may be preempted, by its own queue or
	// reclaimed by the cohort (a drain or a deactivation still evicts it). A
	// preemptor that needs it waits, and its pending reason says for how
	// long. Unset or 0: no minimum (Kueue's behaviour).
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinRuntimeSeconds *int32 `json:"minRuntimeSeconds,omitempty"`
}

// BorrowWithinCohort configures preemption of other queues' workloads to
// borrow quota.
type BorrowWithinCohort struct {
	// policy is Never or LowerPriority.
	// +optional
	// +kubebuilder:validation:Enum=Never;LowerPriority
	// +kubebuilder:default=Never
	Policy PreemptionPolicy `json:"policy,omitempty"`

	// maxPriorityThreshold is, when set, the highest priority that may be
	// preempted. Unset: any lower priority.
	// +optional
	MaxPriorityThreshold *int32 `json:"maxPriorityThreshold,omitempty"`
}

// ClusterQueueStatus reports the state of a ClusterQueue.
type ClusterQueueStatus struct {
	// conditions of the queue: Active says whether it admits workloads, and why not.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`

	// pendingWorkloads is the number of workloads waiting for quota.
	// +optional
	PendingWorkloads int32 `json:"pendingWorkloads"`

	// reservingWorkloads is the number of workloads holding quota.
	// +optional
	ReservingWorkloads int32 `json:"reservingWorkloads"`

	// admittedWorkloads is the number of workloads admitted (holding quota
	// and past every admission check).
	// +optional
	AdmittedWorkloads int32 `json:"admittedWorkloads"`

	// flavorsReservation is the quota reserved per flavor and resource.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	FlavorsReservation []FlavorUsage `json:"flavorsReservation,omitempty"`

	// flavorsUsage is the quota used by admitted workloads per flavor and
	// resource.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	FlavorsUsage []FlavorUsage `json:"flavorsUsage,omitempty"`

	// fairSharing reports the queue's weighted share.
	// +optional
	FairSharing *FairSharingStatus `json:"fairSharing,omitempty"`
}

const (
	// ClusterQueueActive is True when the queue can admit workloads.
	ClusterQueueActive = "Active"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cq
// +kubebuilder:printcolumn:name="Cohort",type=string,JSONPath=".spec.cohort"
// +kubebuilder:printcolumn:name="Strategy",type=string,JSONPath=".spec.queueingStrategy",priority=1
// +kubebuilder:printcolumn:name="Gang",type=string,JSONPath=".spec.gangScheduling.provider",priority=1
// +kubebuilder:printcolumn:name="Pending",type=integer,JSONPath=".status.pendingWorkloads"
// +kubebuilder:printcolumn:name="Admitted",type=integer,JSONPath=".status.admittedWorkloads"
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=".status.conditions[?(@.type==\"Active\")].status"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=".status.conditions[?(@.type==\"Active\")].reason",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"

// ClusterQueue holds quota for a set of resources and flavors and admits
// workloads into it, whole or not at all.
type ClusterQueue struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the ClusterQueue.
	// +optional
	Spec ClusterQueueSpec `json:"spec,omitempty"`
	// status is the observed state of the ClusterQueue.
	// +optional
	Status ClusterQueueStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterQueueList is a list of ClusterQueues.
type ClusterQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterQueue `json:"items"`
}

func init() {
	register(&ClusterQueue{}, &ClusterQueueList{})
}
