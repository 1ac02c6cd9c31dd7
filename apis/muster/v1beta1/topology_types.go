package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names of topology-aware admission on jobs and pods. Each pod template
// annotation is also accepted under Kueue's prefix, kueue.x-k8s.io/, so
// Kueue users' manifests run unchanged.
const (
	// PodSetRequiredTopologyAnnotation names a level: all pods of the pod
	// set in one domain of it.
	PodSetRequiredTopologyAnnotation = "muster.dev/podset-required-topology"
	// PodSetPreferredTopologyAnnotation names a level: one domain of it if
	// possible, else the fewest domains.
	PodSetPreferredTopologyAnnotation = "muster.dev/podset-preferred-topology"
	// PodSetUnconstrainedTopologyAnnotation "true": anywhere the pods fit.
	PodSetUnconstrainedTopologyAnnotation = "muster.dev/podset-unconstrained-topology"
	// PodSetSliceRequiredTopologyAnnotation names the level each slice of
	// PodSetSliceSizeAnnotation pods must share.
	PodSetSliceRequiredTopologyAnnotation = "muster.dev/podset-slice-required-topology"
	PodSetSliceSizeAnnotation             = "muster.dev/podset-slice-size"
	// PodSetGroupNameAnnotation puts pod sets that share it in one domain.
	PodSetGroupNameAnnotation = "muster.dev/podset-group-name"

	// KueuePrefix is the prefix under which Kueue spells the annotations.
	KueuePrefix = "kueue.x-k8s.io/"

	// TopologySchedulingGate holds a placed pod until the ungater gave it
	// its node.
	TopologySchedulingGate = "muster.dev/topology"
	// WorkloadAnnotation on a pod names its Workload (in its namespace).
	WorkloadAnnotation = "muster.dev/workload"
	// PodSetLabel on a pod names its pod set.
	PodSetLabel = "muster.dev/podset"
)

// TopologyReference is the name of a Topology.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type TopologyReference string

// TopologySpec describes a cluster's fabric as a hierarchy of node labels.
type TopologySpec struct {
	// levels are the node labels that name the topology's domains,
	// coarsest first: for example muster.dev/block, then
	// topology.kubernetes.io/rack, then kubernetes.io/hostname. A node that
	// lacks one of them is outside the topology and never offered to its
	// flavors' pod sets. The levels are immutable: placements already
	// admitted are named by them.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(l, self.filter(m, m.nodeLabel == l.nodeLabel).size() == 1)",message="each level must name a different node label"
	// +kubebuilder:validation:XValidation:rule="!self.exists(l, l.nodeLabel == 'kubernetes.io/hostname') || self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname'",message="kubernetes.io/hostname may only be the last level"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="levels are immutable"
	Levels []TopologyLevel `json:"levels"`
}

// TopologyLevel is one level of a topology.
type TopologyLevel struct {
	// nodeLabel is the node label whose values name the domains of this
	// level, for example topology.kubernetes.io/rack.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern="^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
	NodeLabel string `json:"nodeLabel"`
}

// TopologyStatus reports what the topology covers.
type TopologyStatus struct {
	// conditions of the topology: Active says whether its flavors may admit.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`

	// nodes is the number of Ready, schedulable nodes that carry every
	// level label.
	// +optional
	Nodes int32 `json:"nodes,omitempty"`

	// domains is the number of domains at each level, coarsest first.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Domains []int32 `json:"domains,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=topo
// +kubebuilder:printcolumn:name="Levels",type=string,JSONPath=".spec.levels[*].nodeLabel"
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=".status.nodes"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"

// Topology is a cluster's fabric hierarchy (blocks, racks, hosts) that
// topology-aware admission places whole pod sets in. ResourceFlavors refer
// to it by spec.topologyName.
type Topology struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the Topology.
	// +required
	Spec TopologySpec `json:"spec"`
	// status is the observed state of the Topology.
	// +optional
	Status TopologyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TopologyList is a list of Topologies.
type TopologyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Topology `json:"items"`
}

func init() {
	register(&Topology{}, &TopologyList{})
}
