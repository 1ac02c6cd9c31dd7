package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AdmissionCheckReference is the name of an AdmissionCheck.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type AdmissionCheckReference string

// AdmissionCheckSpec names the controller that answers a check and what it
// is configured with.
type AdmissionCheckSpec struct {
	// controllerName names the controller that answers the check, e.g.
	// muster.dev/provisioning-request. It cannot change.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="controllerName is immutable"
	ControllerName string `json:"controllerName"`

	// parameters names an object, read by the check's controller, that
	// configures the check (a ProvisioningRequestConfig for
	// muster.dev/provisioning-request).
	// +optional
	Parameters *AdmissionCheckParametersReference `json:"parameters,omitempty"`
}

// AdmissionCheckParametersReference names a cluster-scoped object.
type AdmissionCheckParametersReference struct {
	// apiGroup is the object's API group.
	// +required
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$"
	APIGroup string `json:"apiGroup"`

	// kind is the object's kind.
	// +required
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$"
	Kind string `json:"kind"`

	// name is the object's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	Name string `json:"name"`
}

// AdmissionCheckStatus is what the check's controller reports.
type AdmissionCheckStatus struct {
	// conditions of the check: Active says whether its controller answers
	// it, and why not. A ClusterQueue using a check that is not Active
	// admits nothing.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`
}

const (
	// AdmissionCheckActive is True while the check's controller answers it.
	AdmissionCheckActive = "Active"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=ac
// +kubebuilder:printcolumn:name="Controller",type=string,JSONPath=".spec.controllerName"
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=".status.conditions[?(@.type==\"Active\")].status"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=".status.conditions[?(@.type==\"Active\")].reason",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"

// AdmissionCheck is a condition, other than quota, that a workload must
// meet before it is admitted: a workload reserves quota in a ClusterQueue,
// then every check of that queue must say Ready.
type AdmissionCheck struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the AdmissionCheck.
	// +required
	Spec AdmissionCheckSpec `json:"spec"`
	// status is the observed state of the AdmissionCheck.
	// +optional
	Status AdmissionCheckStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AdmissionCheckList is a list of AdmissionChecks.
type AdmissionCheckList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AdmissionCheck `json:"items"`
}

// AdmissionChecksStrategy lists a ClusterQueue's checks with the flavors
// each applies to.
type AdmissionChecksStrategy struct {
	// admissionChecks are the queue's checks.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	AdmissionChecks []AdmissionCheckStrategyRule `json:"admissionChecks"`
}

// AdmissionCheckStrategyRule is one check of a ClusterQueue.
type AdmissionCheckStrategyRule struct {
	// name of the AdmissionCheck.
	// +required
	Name AdmissionCheckReference `json:"name"`

	// onFlavors are the flavors the check applies to: a workload is
	// checked only when one of its pod sets is admitted on one of them.
	// Empty: every flavor.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	OnFlavors []ResourceFlavorReference `json:"onFlavors,omitempty"`
}

// CheckState is where a workload stands with one admission check.
// +kubebuilder:validation:Enum=Pending;Ready;Retry;Rejected
type CheckState string

const (
	// CheckStatePending: the check has not answered yet.
	CheckStatePending CheckState = "Pending"
	// CheckStateReady: the check passed; once every check is Ready the
	// workload is admitted.
	CheckStateReady CheckState = "Ready"
	// CheckStateRetry: the check failed for now; the workload releases its
	// quota and is queued again after a backoff.
	CheckStateRetry CheckState = "Retry"
	// CheckStateRejected: the check failed for good; the workload is
	// deactivated.
	CheckStateRejected CheckState = "Rejected"
)

// AdmissionCheckState is a workload's state for one check.
type AdmissionCheckState struct {
	// name of the AdmissionCheck.
	// +required
	Name AdmissionCheckReference `json:"name"`

	// state is Pending, Ready, Retry or Rejected.
	// +required
	State CheckState `json:"state"`

	// lastTransitionTime is when the state last changed.
	// +required
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`

	// message says why the check is in this state, in words for the user.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	Message string `json:"message,omitempty"`

	// retryCount is how many times this check asked for a retry of the
	// workload (Kueue's field): its own count, apart from the workload's
	// requeues for other reasons. It survives the checks' reset on
	// requeue.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RetryCount *int32 `json:"retryCount,omitempty"`

	// requeueAfterSeconds is, with Retry, how long the workload waits
	// before it is queued again; unset: the manager's requeuing backoff.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RequeueAfterSeconds *int32 `json:"requeueAfterSeconds,omitempty"`

	// podSetUpdates are what the check adds to the job's pod sets when it
	// is Ready (the nodes it provisioned, for example); the job is started
	// with them.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	PodSetUpdates []PodSetUpdate `json:"podSetUpdates,omitempty"`
}

// PodSetUpdate is what a check adds to one pod set's pods.
type PodSetUpdate struct {
	// name of the pod set.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// labels to add to the pods.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations to add to the pods.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// nodeSelector entries to add to the pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations to add to the pods.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

func init() {
	register(&AdmissionCheck{}, &AdmissionCheckList{})
}
