package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// MultiClusterControllerName is the controllerName of the
	// AdmissionChecks answered by Muster's multi-cluster dispatcher: the
	// check is Ready once a worker cluster admitted the workload and its
	// job was created there.
	MultiClusterControllerName = "muster.dev/multicluster"
	// MultiClusterManagedBy is the spec.managedBy a manager cluster's job
	// carries so that its own operator leaves it to Muster, which runs it
	// in a worker cluster and mirrors its status back.
	MultiClusterManagedBy = "muster.dev/multicluster"
	// KueueMultiKueueManagedBy is Kueue's value of spec.managedBy for the
	// same purpose. Muster reads it as its own, and writes it to the kinds
	// whose operators accept no other value (Kubeflow's and KubeRay's).
	KueueMultiKueueManagedBy = "kueue.x-k8s.io/multikueue"
	// MultiClusterKubeConfigKey is the key of a MultiCluster's Secret that
	// holds the worker cluster's kubeconfig (Kueue's key).
	MultiClusterKubeConfigKey = "kubeconfig"
)

// MultiClusterConfigSpec lists the worker clusters of a multi-cluster
// check.
type MultiClusterConfigSpec struct {
	// clusters are the names of the MultiClusters a workload may be sent to.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	Clusters []string `json:"clusters"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=mcc
// +kubebuilder:printcolumn:name="Clusters",type=string,JSONPath=".spec.clusters"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"

// MultiClusterConfig is the parameters of a muster.dev/multicluster
// AdmissionCheck: the worker clusters its workloads are dispatched to
// (Kueue's MultiKueueConfig).
type MultiClusterConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the worker clusters.
	// +required
	Spec MultiClusterConfigSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// MultiClusterConfigList is a list of MultiClusterConfigs.
type MultiClusterConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MultiClusterConfig `json:"items"`
}

// LocationType says where a kubeconfig is kept.
// +kubebuilder:validation:Enum=Secret
type LocationType string

// SecretLocationType: the kubeconfig is the "kubeconfig" key of a Secret
// in Muster's namespace.
const SecretLocationType LocationType = "Secret"

// KubeConfig says where a worker cluster's kubeconfig is.
type KubeConfig struct {
	// location is the name of the Secret, in Muster's namespace, whose
	// "kubeconfig" key is the worker cluster's kubeconfig.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Location string `json:"location"`

	// locationType is Secret (the only kind of location Muster reads: a
	// credential is never read from the manager's file system).
	// +optional
	// +kubebuilder:default=Secret
	LocationType LocationType `json:"locationType,omitempty"`
}

// MultiClusterSpec says how to reach a worker cluster.
type MultiClusterSpec struct {
	// kubeConfig locates the worker cluster's kubeconfig.
	// +required
	KubeConfig KubeConfig `json:"kubeConfig"`
}

// MultiClusterStatus is what Muster observes of a worker cluster.
type MultiClusterStatus struct {
	// conditions of the cluster: Active is True while Muster reaches its API
	// server and the APIs it needs are served there; its reason says why
	// not (BadKubeConfig, InsecureKubeConfig, ClientConnectionFailed,
	// MissingAPIs, Connecting).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`
}

const (
	// MultiClusterActive is True while the worker cluster can be used.
	MultiClusterActive = "Active"

	// ReasonMultiClusterActive: the worker's API server answers and serves
	// Muster's Workloads.
	ReasonMultiClusterActive = "Active"
	// ReasonClientConnectionFailed: the worker's API server does not
	// answer.
	ReasonClientConnectionFailed = "ClientConnectionFailed"
	// ReasonMissingAPIs: the worker's API server answers but does not serve
	// Muster's Workloads (Muster's CRDs are not installed there).
	ReasonMissingAPIs = "MissingAPIs"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=mc
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=".status.conditions[?(@.type==\"Active\")].status"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=".status.conditions[?(@.type==\"Active\")].reason"
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=".spec.kubeConfig.location",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"

// MultiCluster is a worker cluster a manager cluster dispatches workloads
// to (Kueue's MultiKueueCluster).
type MultiCluster struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says how to reach the cluster.
	// +required
	Spec MultiClusterSpec `json:"spec"`
	// status is what Muster observes of the cluster.
	// +optional
	Status MultiClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// MultiClusterList is a list of MultiClusters.
type MultiClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MultiCluster `json:"items"`
}

func init() {
	register(&MultiClusterConfig{}, &MultiClusterConfigList{}, &MultiCluster{}, &MultiClusterList{})
}
