// Package v1beta1 is Muster's component configuration: the file the manager
// reads at start (--config), with defaults for every field a user leaves out.
//
// +kubebuilder:object:generate=true
// +groupName=config.muster.dev
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the configuration file.
	GroupVersion = schema.GroupVersion{Group: "config.muster.dev", Version: "v1beta1"}

	// SchemeBuilder adds Configuration to a runtime.Scheme. It is
	// apimachinery's, so importing the API pulls in no controller-runtime.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds Configuration to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// knownTypes are the kinds each type file registers in its init.
var knownTypes []runtime.Object

func register(objs ...runtime.Object) { knownTypes = append(knownTypes, objs...) }

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, knownTypes...)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
