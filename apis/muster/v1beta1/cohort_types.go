package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CohortSpec gives a cohort a parent, quota of its own and a weight.
//
// +kubebuilder:validation:XValidation:rule="(has(self.parent) && size(self.parent) > 0) || !has(self.resourceGroups) || self.resourceGroups.all(g, g.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit) && !has(r.lendingLimit))))",message="borrowingLimit and lendingLimit are only allowed on a cohort with a parent"
// +kubebuilder:validation:XValidation:rule="!has(self.resourceGroups) || self.resourceGroups.all(g1, g1.flavors.all(f1, self.resourceGroups.filter(g2, g2.flavors.exists(f2, f2.name == f1.name)).size() == 1))",message="a flavor may appear in only one resource group"
// +kubebuilder:validation:XValidation:rule="!has(self.resourceGroups) || self.resourceGroups.all(g1, g1.coveredResources.all(r, self.resourceGroups.filter(g2, r in g2.coveredResources).size() == 1))",message="a resource may be covered by only one resource group"
type CohortSpec struct {
	// parent makes this cohort a member of another, forming a tree: unused
	// quota flows between siblings first, then up the tree.
	// +optional
	Parent CohortReference `json:"parent,omitempty"`

	// resourceGroups is quota that belongs to the cohort itself and can be
	// borrowed by any of its members.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`

	// fairSharing sets the cohort's weight within its parent.
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`
}

// CohortStatus reports the state of a Cohort.
type CohortStatus struct {
	// conditions of the cohort.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`

	// fairSharing reports the cohort's weighted share within its parent.
	// +optional
	FairSharing *FairSharingStatus `json:"fairSharing,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cohort
// +kubebuilder:printcolumn:name="Parent",type=string,JSONPath=".spec.parent"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.parent) || self.spec.parent != self.metadata.name",message="a cohort cannot be its own parent"

// Cohort is a group of ClusterQueues (and other Cohorts) that share unused
// quota.
type Cohort struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the Cohort.
	// +optional
	Spec CohortSpec `json:"spec,omitempty"`
	// status is the observed state of the Cohort.
	// +optional
	Status CohortStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CohortList is a list of Cohorts.
type CohortList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cohort `json:"items"`
}

func init() {
	register(&Cohort{}, &CohortList{})
}
