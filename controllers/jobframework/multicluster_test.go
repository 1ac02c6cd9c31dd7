package jobframework

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

func TestPrebuiltWorkloadName(t *testing.T) {
	cases := map[string]struct {
		labels, annotations map[string]string
		want                string
	}{
		"none":               {want: ""},
		"Muster annotation":  {annotations: map[string]string{musterv1beta1.PrebuiltWorkloadAnnotation: "a"}, want: "a"},
		"Kueue annotation":   {annotations: map[string]string{musterv1beta1.KueuePrebuiltWorkloadAnnotation: "b"}, want: "b"},
		"Kueue label":        {labels: map[string]string{musterv1beta1.KueuePrebuiltWorkloadAnnotation: "c"}, want: "c"},
		"Muster's key first": {annotations: map[string]string{musterv1beta1.PrebuiltWorkloadAnnotation: "a", musterv1beta1.KueuePrebuiltWorkloadAnnotation: "b"}, want: "a"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels, Annotations: tc.annotations}}
			if got := PrebuiltWorkloadName(obj); got != tc.want {
				t.Errorf("PrebuiltWorkloadName = %q, want %q", got, tc.want)
			}
		})
	}
}

// Kubeflow's jobs keep managedBy and suspend under spec.runPolicy, and
// accept only Kueue's value there.
func TestMultiClusterRunPolicy(t *testing.T) {
	m := ManagedByAt(musterv1beta1.KueueMultiKueueManagedBy, "spec", "runPolicy", "managedBy")
	job := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"runPolicy": map[string]any{
		"managedBy": musterv1beta1.KueueMultiKueueManagedBy, "suspend": true,
	}}}}
	if !m.Dispatched(job) || !m.Suspended(job) {
		t.Errorf("dispatched %v, suspended %v; want both", m.Dispatched(job), m.Suspended(job))
	}
	cp, err := m.RemoteCopy(job, "wl", "origin")
	if err != nil {
		t.Fatal(err)
	}
	if m.ManagedByOf(cp) != "" || !m.Suspended(cp) {
		t.Errorf("copy: managedBy %q, suspended %v; want unset, true", m.ManagedByOf(cp), m.Suspended(cp))
	}
	if m.ManagedByOf(job) == "" {
		t.Error("RemoteCopy changed the manager's job")
	}
}
