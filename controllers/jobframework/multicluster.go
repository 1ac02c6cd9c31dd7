package jobframework

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// MultiCluster says how a muster.dev/multicluster check runs a kind's jobs
// in a worker cluster: the manager's job carries spec.managedBy so that
// the manager's operator leaves it alone, a copy of it runs in the worker,
// and the worker's status is mirrored onto it. Everything else is generic
// (the copy is the job's spec, read unstructured), so a kind says only
// where its managedBy field is and what value its operator accepts.
type MultiCluster struct {
	// ManagedByPath is the path of the job's managedBy field, e.g.
	// spec.managedBy, or spec.runPolicy.managedBy for Kubeflow's jobs.
	ManagedByPath []string
	// ManagedBy is the value Muster writes there: its own
	// (muster.dev/multicluster) where the operator accepts any, Kueue's
	// (kueue.x-k8s.io/multikueue) where it accepts only that one.
	ManagedBy string
	// CleanCopy, when set, takes out of a worker's copy what the manager's
	// API server generated for the job and the worker's would refuse (a
	// batch/v1 Job's selector and controller-uid labels).
	CleanCopy func(*unstructured.Unstructured)
}

// MultiClusterKind is a kind a multi-cluster check can dispatch.
type MultiClusterKind struct {
	GVK schema.GroupVersionKind
	MultiCluster
}

// ManagedByOf is the job's managedBy value ("" if unset).
func (m MultiCluster) ManagedByOf(job *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(job.Object, m.ManagedByPath...)
	return v
}

// Suspended reports whether the job is suspended: its suspend field is
// beside its managedBy field in every kind (spec.suspend,
// spec.runPolicy.suspend).
func (m MultiCluster) Suspended(job *unstructured.Unstructured) bool {
	path := append(slices.Clone(m.ManagedByPath[:len(m.ManagedByPath)-1]), "suspend")
	v, _, _ := unstructured.NestedBool(job.Object, path...)
	return v
}

// Dispatched reports whether the job is one a multi-cluster check runs
// elsewhere: its managedBy is Muster's value or Kueue's.
func (m MultiCluster) Dispatched(job *unstructured.Unstructured) bool {
	return IsMultiClusterManagedBy(m.ManagedByOf(job))
}

// IsMultiClusterManagedBy reports whether a managedBy value hands a job to
// a multi-cluster check (Muster's value, or Kueue's: a Kueue user's
// MultiKueue jobs run unchanged).
func IsMultiClusterManagedBy(v string) bool {
	return v == musterv1beta1.MultiClusterManagedBy || v == musterv1beta1.KueueMultiKueueManagedBy
}

// RemoteCopy is the job as it is created in a worker cluster: the same
// name, namespace, labels, annotations and spec, without managedBy (the
// worker's operator runs it) or ttlSecondsAfterFinished, naming the
// workload prebuilt for it and marked with the manager's origin. Status, owner references and
// server-set metadata are not copied.
func (m MultiCluster) RemoteCopy(job *unstructured.Unstructured, workload, origin string) (*unstructured.Unstructured, error) {
	spec, ok := job.Object["spec"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s %s has no spec", job.GetKind(), job.GetName())
	}
	out := &unstructured.Unstructured{Object: map[string]any{"spec": runtime.DeepCopyJSON(spec)}}
	out.SetGroupVersionKind(job.GroupVersionKind())
	out.SetNamespace(job.GetNamespace())
	out.SetName(job.GetName())
	out.SetLabels(withEntry(job.GetLabels(), musterv1beta1.MultiClusterOriginLabel, origin))
	out.SetAnnotations(withEntry(job.GetAnnotations(), musterv1beta1.PrebuiltWorkloadAnnotation, workload))
	unstructured.RemoveNestedField(out.Object, m.ManagedByPath...)
	// The manager decides when the job's objects go: a worker deleting a
	// finished job by itself would leave the manager thinking it lost it.
	unstructured.RemoveNestedField(out.Object, "spec", "ttlSecondsAfterFinished")
	if m.CleanCopy != nil {
		m.CleanCopy(out)
	}
	return out, nil
}

func withEntry(m map[string]string, k, v string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[k] = v
	return out
}

// MultiClusterKinds are the kinds a multi-cluster check can dispatch among
// the enabled frameworks.
func (r *Registry) MultiClusterKinds(frameworks []string) []MultiClusterKind {
	var out []MultiClusterKind
	for _, i := range r.enabled(frameworks) {
		if i.MultiCluster != nil {
			out = append(out, MultiClusterKind{GVK: i.GVK, MultiCluster: *i.MultiCluster})
		}
	}
	return slices.Clip(out)
}

// ManagedByAt is the MultiCluster of a kind whose managedBy field is at
// path and takes value.
func ManagedByAt(value string, path ...string) *MultiCluster {
	return &MultiCluster{ManagedByPath: path, ManagedBy: value}
}

// dispatched reports whether a job of the reconciler's kind runs in a
// worker cluster: its workload finishes when the worker's does, and the job
// stays unsuspended in the manager whatever its mirrored status says, which
// is not the job running again.
func (r *Reconciler[T]) dispatched(obj client.Object) bool {
	mc := r.kind.MultiCluster
	if mc == nil {
		return false
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	return err == nil && mc.Dispatched(&unstructured.Unstructured{Object: u})
}
