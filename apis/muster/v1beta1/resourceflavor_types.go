package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceFlavorSpec describes a kind of node: how to steer pods onto it.
//
// +kubebuilder:validation:XValidation:rule="!has(self.topologyName) || (has(self.nodeLabels) && size(self.nodeLabels) > 0)",message="a flavor with a topologyName must have nodeLabels"
// +kubebuilder:validation:XValidation:rule="!has(self.topologyName) || !has(self.nodeFit) || self.nodeFit == 'Pin'",message="a flavor with a topologyName always places its pods: nodeFit can only be Pin (or unset)"
type ResourceFlavorSpec struct {
	// nodeLabels are injected as a nodeSelector into the pods of a workload
	// admitted on this flavor, so they land on nodes that have these labels.
	// +optional
	// +kubebuilder:validation:MaxProperties=8
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`

	// nodeTaints are the taints that the nodes of this flavor carry. A pod set
	// is assigned the flavor only if it tolerates them, on its own or through
	// the flavor's tolerations.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	NodeTaints []corev1.Taint `json:"nodeTaints,omitempty"`

	// tolerations are injected into the pods of a workload admitted on this
	// flavor.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// topologyName names the Topology of this flavor's nodes. Pod sets
	// admitted on the flavor are placed in it: a workload is admitted only
	// if its pods can be packed onto the flavor's Ready nodes, in one
	// domain when a pod set requires it. It and nodeLabels cannot change
	// while workloads are admitted on the flavor.
	// +optional
	TopologyName TopologyReference `json:"topologyName,omitempty"`

	// nodeFit says whether a workload is admitted on this flavor only if
	// its pods can really be packed onto the flavor's nodes (those with
	// its nodeLabels, Ready, schedulable, whose taints the pods tolerate),
	// beside the pods already running there. Check (the default) admits
	// only what fits and lets kube-scheduler bind the pods; Pin also sends
	// each pod to the node the admission counted it on (as an
	// unconstrained topology request does); None admits on quota alone,
	// for pools whose nodes arrive with the job (an autoscaler, an
	// admission check). A flavor with a topologyName always places (Pin).
	// It cannot change while workloads admitted on the flavor hold quota.
	// +optional
	NodeFit NodeFitMode `json:"nodeFit,omitempty"`
}

// NodeFitMode is how a flavor checks that its nodes hold a workload.
// +kubebuilder:validation:Enum=Check;Pin;None
type NodeFitMode string

const (
	// NodeFitCheck admits a workload only if its pods fit the flavor's
	// nodes; kube-scheduler binds them.
	NodeFitCheck NodeFitMode = "Check"
	// NodeFitPin admits as Check does and sends each pod to its node.
	NodeFitPin NodeFitMode = "Pin"
	// NodeFitNone admits on quota alone.
	NodeFitNone NodeFitMode = "None"
)

// EffectiveNodeFit is the flavor's node fit with the default applied: Pin
// with a topology, Check when unset.
func (s *ResourceFlavorSpec) EffectiveNodeFit() NodeFitMode {
	switch {
	case s.TopologyName != "":
		return NodeFitPin
	case s.NodeFit == "":
		return NodeFitCheck
	}
	return s.NodeFit
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=rf;flavor
// +kubebuilder:printcolumn:name="Node Fit",type=string,JSONPath=".spec.nodeFit",description="Check (default), Pin or None"
// +kubebuilder:printcolumn:name="Topology",type=string,JSONPath=".spec.topologyName"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"

// ResourceFlavor is a kind of node that ClusterQueues assign quota for.
type ResourceFlavor struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the ResourceFlavor.
	// +optional
	Spec ResourceFlavorSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceFlavorList is a list of ResourceFlavors.
type ResourceFlavorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceFlavor `json:"items"`
}

func init() {
	register(&ResourceFlavor{}, &ResourceFlavorList{})
}
