package app

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// TestTranslateClusterQueue: v1beta2's renames and values become Muster's,
// and what has no equivalent is reported by path, not silently dropped.
func TestTranslateClusterQueue(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
		"metadata": map[string]any{"name": "cq", "annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
		"spec": map[string]any{
			"cohortName":        "root",
			"flavorFungibility": map[string]any{"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"},
			"admissionScope":    map[string]any{"admissionMode": "UsageBasedAdmissionFairSharing"},
			"admissionChecks":   []any{"provisioning"},
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu"},
				"flavors":          []any{map[string]any{"name": "f", "resources": []any{map[string]any{"name": "cpu", "nominalQuota": "4"}}}},
			}},
		},
	}}
	var kind kueueKind
	for _, k := range kueueKinds {
		if k.kind == "ClusterQueue" {
			kind = k
		}
	}
	obj, dropped, err := translate(kind, u)
	if err != nil {
		t.Fatal(err)
	}
	cq := obj.(*musterv1beta1.ClusterQueue)
	if cq.Spec.Cohort != "root" || cq.Spec.FlavorFungibility.WhenCanBorrow != musterv1beta1.Borrow || cq.Spec.FlavorFungibility.WhenCanPreempt != musterv1beta1.Preempt {
		t.Errorf("translated spec: %+v", cq.Spec)
	}
	if len(cq.Annotations) != 0 {
		t.Errorf("kubectl's last-applied annotation is Kueue's object's, not Muster's: %v", cq.Annotations)
	}
	if cq.Spec.AdmissionScope == nil || cq.Spec.AdmissionScope.AdmissionMode != musterv1beta1.UsageBasedAdmissionFairSharing {
		t.Errorf("admissionScope (Kueue's admission fair sharing) not carried over: %+v", cq.Spec.AdmissionScope)
	}
	if len(dropped) != 1 || dropped[0] != "spec.admissionChecks" {
		t.Errorf("dropped %v, want [spec.admissionChecks]", dropped)
	}
}
