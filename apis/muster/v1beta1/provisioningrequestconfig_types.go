package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProvisioningRequestControllerName is the controllerName of the
// AdmissionChecks answered by Muster's ProvisioningRequest check.
const ProvisioningRequestControllerName = "muster.dev/provisioning-request"

// ProvisioningRequestConfigSpec is how the ProvisioningRequest check asks
// the cluster autoscaler for a workload's nodes. Kueue's fields.
type ProvisioningRequestConfigSpec struct {
	// provisioningClassName is the class of the ProvisioningRequests, e.g.
	// check-capacity.autoscaling.x-k8s.io or
	// best-effort-atomic-scale-up.autoscaling.x-k8s.io.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	ProvisioningClassName string `json:"provisioningClassName"`

	// parameters are copied into every ProvisioningRequest's
	// spec.parameters.
	// +optional
	// +kubebuilder:validation:MaxProperties=100
	Parameters map[string]Parameter `json:"parameters,omitempty"`

	// managedResources are the resources the autoscaler provides: only
	// pod sets that request one of them are in the ProvisioningRequest,
	// and a workload that requests none is Ready at once. Empty: every
	// pod set.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	ManagedResources []corev1.ResourceName `json:"managedResources,omitempty"`

	// retryStrategy is how often, and after what backoff, a failed
	// ProvisioningRequest is tried again before the workload is rejected.
	// +optional
	// +kubebuilder:default={backoffLimitCount:3,backoffBaseSeconds:60,backoffMaxSeconds:1800}
	RetryStrategy *ProvisioningRequestRetryStrategy `json:"retryStrategy,omitempty"`

	// podSetUpdates are what the check adds to the pods once their nodes
	// are provisioned.
	// +optional
	PodSetUpdates *ProvisioningRequestPodSetUpdates `json:"podSetUpdates,omitempty"`
}

// Parameter is a ProvisioningRequest parameter's value.
// +kubebuilder:validation:MaxLength=255
type Parameter string

// ProvisioningRequestRetryStrategy bounds the retries of a failed request.
type ProvisioningRequestRetryStrategy struct {
	// backoffLimitCount is how many times a failed request is retried
	// (the workload requeued) before the workload is rejected; 0 rejects
	// on the first failure.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	BackoffLimitCount *int32 `json:"backoffLimitCount,omitempty"`

	// backoffBaseSeconds is the first retry's backoff, in seconds; each
	// further one doubles it.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	BackoffBaseSeconds *int32 `json:"backoffBaseSeconds,omitempty"`

	// backoffMaxSeconds caps the backoff, in seconds.
	// +optional
	// +kubebuilder:default=1800
	// +kubebuilder:validation:Minimum=1
	BackoffMaxSeconds *int32 `json:"backoffMaxSeconds,omitempty"`
}

// ProvisioningRequestPodSetUpdates are added to the pods of a provisioned
// workload.
type ProvisioningRequestPodSetUpdates struct {
	// nodeSelector entries whose values come from the ProvisioningRequest's
	// status.provisioningClassDetails.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=8
	NodeSelector []ProvisioningRequestPodSetUpdatesNodeSelector `json:"nodeSelector,omitempty"`
}

// ProvisioningRequestPodSetUpdatesNodeSelector is one node selector entry.
type ProvisioningRequestPodSetUpdatesNodeSelector struct {
	// key is the node label.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	Key string `json:"key"`

	// valueFromProvisioningClassDetail is the key, in the request's
	// status.provisioningClassDetails, of the label's value.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	ValueFromProvisioningClassDetail string `json:"valueFromProvisioningClassDetail"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=prc
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=".spec.provisioningClassName"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"

// ProvisioningRequestConfig configures an AdmissionCheck of the
// muster.dev/provisioning-request controller.
type ProvisioningRequestConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the ProvisioningRequestConfig.
	// +required
	Spec ProvisioningRequestConfigSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ProvisioningRequestConfigList is a list of ProvisioningRequestConfigs.
type ProvisioningRequestConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProvisioningRequestConfig `json:"items"`
}

func init() {
	register(&ProvisioningRequestConfig{}, &ProvisioningRequestConfigList{})
}
