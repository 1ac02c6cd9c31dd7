// Package v1beta1 is Muster's component configuration: the file the manager
// reads at start (--config), with defaults for every field a user leaves out.
//
// +kubebuilder:object:generate=true
// +groupName=config.muster.dev
package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the configuration file.
	GroupVersion = schema.GroupVersion{Group: "config.muster.dev", Version: "v1beta1"}

	// SchemeBuilder registers Configuration with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds Configuration to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
