package v1beta1

import (
	"fmt"
	"net/url"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// DefaultLimit is how many pending workloads a query returns when it
	// names no limit (Kueue's default too).
	DefaultLimit = 1000
	// MaxLimit is the most one query returns.
	MaxLimit = 100000
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "visibility.muster.dev", Version: "v1beta1"}

	// SchemeBuilder adds the kinds of this package, and the decoding of
	// their query parameters, to a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes, addConversions)

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource is a resource of this group.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&ClusterQueue{}, &ClusterQueueList{},
		&LocalQueue{}, &LocalQueueList{},
		&PendingWorkloadsSummary{}, &PendingWorkloadOptions{},
		&Workload{}, &WorkloadList{}, &WorkloadExplanation{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// addConversions lets the API server's parameter codec read ?limit= and
// ?offset= into PendingWorkloadOptions (what conversion-gen would write for
// two fields).
func addConversions(s *runtime.Scheme) error {
	return s.AddConversionFunc((*url.Values)(nil), (*PendingWorkloadOptions)(nil), func(a, b any, _ conversion.Scope) error {
		return OptionsFromQuery(*a.(*url.Values), b.(*PendingWorkloadOptions))
	})
}

// OptionsFromQuery reads limit and offset from a query, with the default
// limit when absent. A value that is not a non-negative integer is an
// error, not a silent zero.
func OptionsFromQuery(q url.Values, out *PendingWorkloadOptions) error {
	out.Limit, out.Offset = DefaultLimit, 0
	for name, field := range map[string]*int64{"limit": &out.Limit, "offset": &out.Offset} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%s must be a non-negative integer, not %q", name, v)
		}
		*field = n
	}
	return nil
}
