package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=wpc
// +kubebuilder:printcolumn:name="Value",type=integer,JSONPath=".value"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"

// WorkloadPriorityClass gives workloads a priority for queueing and
// preemption without changing the priority of their pods.
type WorkloadPriorityClass struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// value is the priority; higher is more important.
	// +required
	Value int32 `json:"value"`

	// description says when to use this class.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`

	// preemption protects the class's workloads from preemption.
	// +optional
	Preemption *WorkloadPriorityClassPreemption `json:"preemption,omitempty"`
}

// WorkloadPriorityClassPreemption protects a class's admitted workloads.
type WorkloadPriorityClassPreemption struct {
	// minRuntimeSeconds is how long, in seconds, the class's workloads run
	// before they may be preempted or reclaimed (a drain or a deactivation
	// still evicts them); the larger of it and the ClusterQueue's
	// preemption.minRuntimeSeconds applies. Unset or 0: no minimum.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinRuntimeSeconds *int32 `json:"minRuntimeSeconds,omitempty"`
}

// +kubebuilder:object:root=true

// WorkloadPriorityClassList is a list of WorkloadPriorityClasses.
type WorkloadPriorityClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkloadPriorityClass `json:"items"`
}

func init() {
	register(&WorkloadPriorityClass{}, &WorkloadPriorityClassList{})
}
