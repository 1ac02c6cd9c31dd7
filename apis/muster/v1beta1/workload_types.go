package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadSpec is what a job needs: its pod sets and where it queues.
type WorkloadSpec struct {
	// podSets are the groups of identical pods the job runs, e.g. a master
	// and its workers. The workload is admitted only if all of them fit.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +required
	PodSets []PodSet `json:"podSets"`

	// queueName is the LocalQueue, in the workload's namespace, it is
	// submitted to.
	// +required
	QueueName LocalQueueName `json:"queueName"`

	// priorityClassName is the WorkloadPriorityClass or PriorityClass the
	// priority was taken from.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// priorityClassSource says which kind priorityClassName names.
	// +optional
	// +kubebuilder:validation:Enum=muster.dev/workloadpriorityclass;scheduling.k8s.io/priorityclass;""
	// +kubebuilder:default=""
	PriorityClassSource string `json:"priorityClassSource,omitempty"`

	// priority orders the workload in its queue and decides whom it may
	// preempt; higher is more important.
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// active false takes the workload out of the queue and evicts it if it is
	// admitted.
	// +optional
	// +kubebuilder:default=true
	Active *bool `json:"active,omitempty"`

	// maximumExecutionTimeSeconds is how long, in seconds, the workload may
	// hold quota over all its admissions: past it, it is deactivated
	// (reason MaximumExecutionTimeExceeded). Taken from the job's
	// muster.dev/max-exec-time-seconds label (or Kueue's
	// kueue.x-k8s.io/max-exec-time-seconds) or muster.dev/max-runtime
	// annotation. A bounded workload may backfill room held for a starving
	// one when it ends in time. Unset: its ClusterQueue's, if any.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaximumExecutionTimeSeconds *int32 `json:"maximumExecutionTimeSeconds,omitempty"`
}

const (
	// WorkloadPriorityClassSource names a muster.dev WorkloadPriorityClass.
	WorkloadPriorityClassSource = "muster.dev/workloadpriorityclass"
	// PodPriorityClassSource names a scheduling.k8s.io PriorityClass.
	PodPriorityClassSource = "scheduling.k8s.io/priorityclass"
)

// PodSet is a group of pods that share a template.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minCount) || self.minCount <= self.count",message="minCount must not exceed count"
type PodSet struct {
	// name of the pod set, unique in the workload.
	// +kubebuilder:default=main
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
	// +optional
	Name string `json:"name"`

	// template is the pod template of the pod set; its requests are what the
	// pod set uses of the quota, per pod.
	// +required
	Template corev1.PodTemplateSpec `json:"template"`

	// count is the number of pods.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	Count int32 `json:"count"`

	// minCount is, when set, the fewest pods the pod set may be admitted with
	// when all of them do not fit.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinCount *int32 `json:"minCount,omitempty"`

	// topologyRequest says how the pod set's pods must sit in the topology
	// of the flavor it is admitted on. It is taken from the podset-*-topology
	// annotations of the job's pod template (under muster.dev/ or Kueue's
	// kueue.x-k8s.io/). A pod set without one, on a flavor with a
	// topology, is placed unconstrained: still only where its pods fit.
	// +optional
	TopologyRequest *PodSetTopologyRequest `json:"topologyRequest,omitempty"`
}

// PodSetTopologyRequest is how tightly a pod set's pods must sit together.
//
// +kubebuilder:validation:XValidation:rule="[has(self.required), has(self.preferred), has(self.unconstrained) && self.unconstrained].filter(x, x).size() <= 1",message="at most one of required, preferred and unconstrained may be set"
// +kubebuilder:validation:XValidation:rule="has(self.podSetSliceRequiredTopology) == has(self.podSetSliceSize)",message="podSetSliceRequiredTopology and podSetSliceSize go together"
type PodSetTopologyRequest struct {
	// required is a level's node label: all pods in one domain of that
	// level, or the workload is not admitted.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	Required *string `json:"required,omitempty"`

	// preferred is a level's node label: all pods in one domain of that
	// level if possible, else in one domain of the nearest coarser level,
	// else over the fewest domains.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	Preferred *string `json:"preferred,omitempty"`

	// unconstrained places the pods anywhere they fit, filling the fullest
	// nodes first so that large holes stay for large jobs.
	// +optional
	Unconstrained *bool `json:"unconstrained,omitempty"`

	// podIndexLabel is the pod label holding a pod's index in its pod set
	// (a Job's completion index, a replica index), used to give pods with
	// neighbouring indexes neighbouring nodes.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	PodIndexLabel *string `json:"podIndexLabel,omitempty"`

	// subGroupIndexLabel is the pod label holding the index of a pod's
	// sub-group in its pod set (a JobSet's child Job), for kinds whose pods
	// are numbered within sub-groups: pods are ordered by it, then by
	// podIndexLabel, so that each sub-group's pods are neighbours and a
	// sub-group of podSetSliceSize pods is one slice.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	SubGroupIndexLabel *string `json:"subGroupIndexLabel,omitempty"`

	// subGroupCount is how many sub-groups the pod set has (a replicated
	// job's replicas), each of count / subGroupCount pods: a pod's position
	// in the placement is its sub-group index times that, plus its pod
	// index.
	// +optional
	// +kubebuilder:validation:Minimum=1
	SubGroupCount *int32 `json:"subGroupCount,omitempty"`

	// podSetSliceRequiredTopology is a level's node label: each slice of
	// podSetSliceSize pods lands in one domain of that level.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	PodSetSliceRequiredTopology *string `json:"podSetSliceRequiredTopology,omitempty"`

	// podSetSliceSize is the number of pods per slice; the pod set's count
	// must be a multiple of it.
	// +optional
	// +kubebuilder:validation:Minimum=1
	PodSetSliceSize *int32 `json:"podSetSliceSize,omitempty"`

	// podSetGroupName puts the pod sets of a workload that share it in the
	// same domain, e.g. a PyTorchJob's master and workers.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	PodSetGroupName *string `json:"podSetGroupName,omitempty"`
}

// WorkloadStatus reports where a workload is in its life.
type WorkloadStatus struct {
	// conditions of the workload: QuotaReserved, Admitted, PodsReady, Evicted, Preempted,
	// Requeued and Finished.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`

	// admission is the quota reserved for the workload: the ClusterQueue and
	// the flavor of each resource of each pod set. It is set exactly while
	// the workload holds quota.
	// +optional
	Admission *Admission `json:"admission,omitempty"`

	// requeueState records the backoff of a workload that was evicted and
	// requeued.
	// +optional
	RequeueState *RequeueState `json:"requeueState,omitempty"`

	// accumulatedPastExecutionTimeSeconds is how long, in seconds, the
	// workload held quota in its admissions before the current one: its
	// maximum execution time counts them all.
	// +optional
	// +kubebuilder:validation:Minimum=0
	AccumulatedPastExecutionTimeSeconds *int32 `json:"accumulatedPastExecutionTimeSeconds,omitempty"`

	// admissionChecks are the workload's states for the checks of its
	// ClusterQueue that apply to the flavors it reserved: it is admitted
	// once all are Ready.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +patchStrategy=merge
	// +patchMergeKey=name
	// +kubebuilder:validation:MaxItems=16
	AdmissionChecks []AdmissionCheckState `json:"admissionChecks,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// nominatedClusterNames are the worker clusters a multi-cluster
	// check has sent copies of the workload to, while none of them has
	// admitted it (Kueue's field).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	NominatedClusterNames []string `json:"nominatedClusterNames,omitempty"`

	// clusterName is the worker cluster the workload runs in: the first
	// one whose Muster admitted its copy (Kueue's field).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ClusterName string `json:"clusterName,omitempty"`
}

// Admission is the quota reserved for a workload.
type Admission struct {
	// clusterQueue is where the quota is reserved.
	// +required
	ClusterQueue ClusterQueueReference `json:"clusterQueue"`

	// podSetAssignments holds the flavors and usage of each pod set.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +required
	PodSetAssignments []PodSetAssignment `json:"podSetAssignments"`
}

// PodSetAssignment is the flavor and quota assigned to one pod set.
type PodSetAssignment struct {
	// name of the pod set.
	// +required
	Name string `json:"name"`

	// flavors maps each resource the pod set requests to its flavor.
	// +optional
	Flavors map[corev1.ResourceName]ResourceFlavorReference `json:"flavors,omitempty"`

	// resourceUsage is the quota the pod set uses: per-pod requests times count.
	// +optional
	ResourceUsage corev1.ResourceList `json:"resourceUsage,omitempty"`

	// count is the number of pods admitted; less than the pod set's count
	// only under partial admission.
	// +optional
	Count *int32 `json:"count,omitempty"`

	// topologyAssignment is where the pod set's pods go, when its flavor
	// has a topology: the pods per node, grouped by the domain above the
	// nodes, so a 1,000-pod set on 1,000 nodes stays a few kilobytes.
	// +optional
	TopologyAssignment *TopologyAssignment `json:"topologyAssignment,omitempty"`

	// delayedTopologyRequest is Pending while the pod set's placement
	// waits for nodes an admission check provisions (Kueue's field): its
	// quota is reserved, and it is placed once the check is Ready and the
	// nodes exist; Ready once placed.
	// +optional
	DelayedTopologyRequest *DelayedTopologyRequestState `json:"delayedTopologyRequest,omitempty"`
}

// DelayedTopologyRequestState is whether a delayed placement was made.
// +kubebuilder:validation:Enum=Pending;Ready
type DelayedTopologyRequestState string

const (
	// DelayedTopologyRequestPending: the pod set is not placed yet.
	DelayedTopologyRequestPending DelayedTopologyRequestState = "Pending"
	// DelayedTopologyRequestReady: the pod set was placed.
	DelayedTopologyRequestReady DelayedTopologyRequestState = "Ready"
)

// TopologyAssignment is the placement of a pod set's pods.
type TopologyAssignment struct {
	// levels are the topology's node labels, coarsest first; the last one
	// names the leaves of domains[].
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Levels []string `json:"levels"`

	// domains group the leaves by their parent domain.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100000
	Domains []TopologyDomainAssignment `json:"domains"`
}

// TopologyDomainAssignment is the pods in the leaves below one domain.
//
// +kubebuilder:validation:XValidation:rule="!has(self.counts) || size(self.counts) == size(self.leaves)",message="counts must have one entry per leaf"
// +kubebuilder:validation:XValidation:rule="has(self.counts) != has(self.count)",message="exactly one of count and counts must be set"
type TopologyDomainAssignment struct {
	// values name the parent domain: one value per level but the last.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=7
	Values []string `json:"values,omitempty"`

	// leaves are the last level's values (the node names when the last
	// level is kubernetes.io/hostname) that get pods.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100000
	Leaves []string `json:"leaves"`

	// count is the number of pods of every leaf, when they all get the same.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Count *int32 `json:"count,omitempty"`

	// counts is the number of pods per leaf, in the order of leaves.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100000
	Counts []int32 `json:"counts,omitempty"`
}

// RequeueState is the backoff of a requeued workload.
type RequeueState struct {
	// count is how many times the workload was requeued after eviction.
	// +optional
	Count *int32 `json:"count,omitempty"`
	// requeueAt is when the workload becomes eligible again.
	// +optional
	RequeueAt *metav1.Time `json:"requeueAt,omitempty"`
}

// Workload condition types.
const (
	// WorkloadQuotaReserved is True while the workload holds quota in a
	// ClusterQueue. While False its message says what the workload waits for.
	WorkloadQuotaReserved = "QuotaReserved"
	// WorkloadAdmitted is True when the job may run.
	WorkloadAdmitted = "Admitted"
	// WorkloadPodsReady is True when all the job's pods are ready.
	WorkloadPodsReady = "PodsReady"
	// WorkloadEvicted is True when the workload was told to stop; the reason
	// says why: Preempted, ClusterQueueStopped, LocalQueueStopped,
	// InactiveWorkload, JobChanged, PodsReadyTimeout or
	// RequeuingLimitExceeded.
	WorkloadEvicted = "Evicted"
	// WorkloadPreempted is True when the workload was preempted; the reason
	// says by whom: InClusterQueue, InCohortReclamation,
	// InCohortReclaimWhileBorrowing or InCohortFairSharing.
	WorkloadPreempted = "Preempted"
	// WorkloadRequeued is True when an evicted workload was put back in its
	// queue, and stays so once it is admitted again (as in Kueue): its
	// transition time is when the workload was last queued.
	WorkloadRequeued = "Requeued"
	// WorkloadFinished is True when the job finished; its quota is released.
	WorkloadFinished = "Finished"
)

// Condition reasons. They are API: they are written to the conditions of
// Workloads and ClusterQueues and label muster_evicted_workloads_total, and
// users and automation match on them. internal/workload decides which
// transition writes which.
const (
	// QuotaReserved reasons.
	ReasonPending              = "Pending"
	ReasonQuotaReserved        = "QuotaReserved"
	ReasonBackoff              = "Backoff"
	ReasonLocalQueueNotFound   = "LocalQueueNotFound"
	ReasonClusterQueueNotFound = "ClusterQueueNotFound"

	// Admitted reasons.
	ReasonAdmitted = "Admitted"
	ReasonEvicted  = "Evicted"

	// Evicted reasons (Preempted is also the Preempted condition's type).
	ReasonPreempted = "Preempted"
	// ReasonClusterQueueStopped: the workload's ClusterQueue is stopped
	// with HoldAndDrain.
	ReasonClusterQueueStopped = "ClusterQueueStopped"
	// ReasonLocalQueueStopped: the workload's LocalQueue is stopped with
	// HoldAndDrain.
	ReasonLocalQueueStopped = "LocalQueueStopped"
	// ReasonNodeFailures: a node of the workload's topology placement
	// failed (gone, not Ready, tainted NoExecute) and no other node of its
	// domain had room for its pods there (Kueue's reason).
	ReasonNodeFailures = "NodeFailures"
	// ReasonNodeReplaced is the event reason of a placement whose failed
	// nodes were replaced.
	ReasonNodeReplaced = "NodeReplaced"
	// ReasonInvalidTopology: a Topology's levels are not usable.
	ReasonInvalidTopology = "InvalidTopology"
	// ReasonTopologyNotFound: a ResourceFlavor names a Topology that does
	// not exist.
	ReasonTopologyNotFound = "TopologyNotFound"
	// ReasonInactiveWorkload: spec.active was set to false.
	ReasonInactiveWorkload = "InactiveWorkload"
	// ReasonJobChanged: the job's pods or requests changed after admission.
	ReasonJobChanged = "JobChanged"
	// ReasonPodsReadyTimeout evicts a workload whose pods were not ready in
	// time (waitForPodsReady).
	ReasonPodsReadyTimeout = "PodsReadyTimeout"
	// ReasonRequeuingLimitExceeded deactivates a workload evicted for its
	// pods more often than waitForPodsReady's backoffLimitCount allows.
	ReasonRequeuingLimitExceeded = "RequeuingLimitExceeded"
	// ReasonMaximumExecutionTimeExceeded deactivates a workload that held
	// quota longer than its maximum execution time.
	ReasonMaximumExecutionTimeExceeded = "MaximumExecutionTimeExceeded"
	// ReasonAdmissionCheck evicts a workload one of whose admission checks
	// asked for a retry: its quota is released and it is queued again
	// after a backoff (Kueue's reason).
	ReasonAdmissionCheck = "AdmissionCheck"
	// ReasonAdmissionCheckRejected deactivates a workload one of whose
	// admission checks rejected it.
	ReasonAdmissionCheckRejected = "AdmissionCheckRejected"

	// Preempted reasons: who took the victim's quota.
	// ReasonInClusterQueue: a higher-priority (or older) workload of its
	// ClusterQueue.
	ReasonInClusterQueue = "InClusterQueue"
	// ReasonInCohortReclamation: a queue of its cohort took back quota its
	// ClusterQueue borrowed.
	ReasonInCohortReclamation = "InCohortReclamation"
	// ReasonInCohortReclaimWhileBorrowing: a higher-priority workload of the
	// cohort that borrows itself (borrowWithinCohort).
	ReasonInCohortReclaimWhileBorrowing = "InCohortReclaimWhileBorrowing"
	// ReasonInCohortFairSharing: its ClusterQueue's share of the cohort is
	// above the preemptor's (fair sharing).
	ReasonInCohortFairSharing = "InCohortFairSharing"

	// Finished reasons.
	ReasonSucceeded = "Succeeded"
	ReasonFailed    = "Failed"
	// ReasonFailedToStart finishes an admitted workload whose job cannot be
	// started with its placement.
	ReasonFailedToStart = "FailedToStart"

	// PodsReady reasons.
	ReasonReady = "Ready"
	// ReasonWaitForStart: PodsReady is False because the pods of this
	// admission have not all been ready yet.
	ReasonWaitForStart = "WaitForStart"
	// ReasonWaitForRecovery: PodsReady is False because pods that were all
	// ready stopped being so.
	ReasonWaitForRecovery = "WaitForRecovery"

	// ClusterQueue and LocalQueue Active reasons (Ready too).
	ReasonFlavorNotFound       = "FlavorNotFound"
	ReasonStopped              = "Stopped"
	ReasonTerminating          = "Terminating"
	ReasonClusterQueueInactive = "ClusterQueueInactive"
	// ReasonAdmissionCheckNotFound: the queue names an AdmissionCheck that
	// does not exist; ReasonAdmissionCheckInactive: one that its controller
	// does not answer (not Active).
	ReasonAdmissionCheckNotFound = "AdmissionCheckNotFound"
	ReasonAdmissionCheckInactive = "AdmissionCheckInactive"

	// Admitted reasons while quota is reserved and admission checks are
	// not all Ready yet.
	ReasonUnsatisfiedChecks = "UnsatisfiedChecks"
	// ReasonCohortCycle: the queue's cohort is in a cycle of parents, so its
	// quota tree is undefined and it admits nothing.
	ReasonCohortCycle = "CohortCycle"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wl
// +kubebuilder:printcolumn:name="Queue",type=string,JSONPath=".spec.queueName"
// +kubebuilder:printcolumn:name="Reserved in",type=string,JSONPath=".status.admission.clusterQueue"
// +kubebuilder:printcolumn:name="Admitted",type=string,JSONPath=".status.conditions[?(@.type==\"Admitted\")].status"
// +kubebuilder:printcolumn:name="Finished",type=string,JSONPath=".status.conditions[?(@.type==\"Finished\")].status"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=".spec.priority",priority=1
// +kubebuilder:printcolumn:name="Domain",type=string,JSONPath=".status.admission.podSetAssignments[0].topologyAssignment.domains[0].values",description="The first domain the first pod set is placed in",priority=1
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=".status.clusterName",description="The worker cluster a multi-cluster check sent the workload to",priority=1
// +kubebuilder:printcolumn:name="Checks",type=string,JSONPath=".status.admissionChecks[*].state",description="The states of the workload's admission checks",priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=".status.conditions[?(@.type==\"QuotaReserved\")].message",priority=1
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.admission) || self.spec.queueName == oldSelf.spec.queueName",message="queueName cannot change while the workload holds quota"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.admission) || self.spec.podSets == oldSelf.spec.podSets",message="podSets cannot change while the workload holds quota"

// Workload is the unit of admission: one job, all its pods, admitted whole.
type Workload struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the Workload.
	// +required
	Spec WorkloadSpec `json:"spec"`
	// status is the observed state of the Workload.
	// +optional
	Status WorkloadStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkloadList is a list of Workloads.
type WorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Workload `json:"items"`
}

func init() {
	register(&Workload{}, &WorkloadList{})
}
