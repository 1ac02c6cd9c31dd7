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
	if len(dropped) != 0 || len(cq.Spec.AdmissionChecks) != 1 || cq.Spec.AdmissionChecks[0] != "provisioning" {
		t.Errorf("admissionChecks not carried over (dropped %v): %v", dropped, cq.Spec.AdmissionChecks)
	}
}

// TestTranslateProvisioningCheck: a check of Kueue's ProvisioningRequest
// controller becomes one of Muster's, pointing at Muster's copy of its
// config.
func TestTranslateProvisioningCheck(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": map[string]any{"name": "prov"},
		"spec": map[string]any{"controllerName": "kueue.x-k8s.io/provisioning-request",
			"parameters": map[string]any{"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "prov-config"}},
	}}
	obj, dropped, err := translate(kindNamed(t, "AdmissionCheck"), u)
	if err != nil {
		t.Fatal(err)
	}
	ac := obj.(*musterv1beta1.AdmissionCheck)
	if ac.Spec.ControllerName != musterv1beta1.ProvisioningRequestControllerName || ac.Spec.Parameters.APIGroup != "muster.dev" || len(dropped) != 0 {
		t.Errorf("translated %+v (dropped %v)", ac.Spec, dropped)
	}
	cfg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ProvisioningRequestConfig", "metadata": map[string]any{"name": "prov-config"},
		"spec": map[string]any{"provisioningClassName": "check-capacity.autoscaling.x-k8s.io", "managedResources": []any{"nvidia.com/gpu"},
			"podSetMergePolicy": "IdenticalPodTemplates"},
	}}
	obj, dropped, err = translate(kindNamed(t, "ProvisioningRequestConfig"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if prc := obj.(*musterv1beta1.ProvisioningRequestConfig); prc.Spec.ProvisioningClassName != "check-capacity.autoscaling.x-k8s.io" || len(prc.Spec.ManagedResources) != 1 {
		t.Errorf("translated %+v", prc.Spec)
	}
	if len(dropped) != 1 || dropped[0] != "spec.podSetMergePolicy" {
		t.Errorf("dropped %v, want the merge policy Muster does not have", dropped)
	}
}

func kindNamed(t *testing.T, name string) kueueKind {
	t.Helper()
	for _, k := range kueueKinds {
		if k.kind == name {
			return k
		}
	}
	t.Fatalf("no kind %s", name)
	return kueueKind{}
}

// MultiKueue's objects become Muster's multi-cluster ones: the check's
// controller and config, and a v1beta2 cluster's kubeconfig moved to
// where Muster (and Kueue v1beta1) keep it.
func TestTranslateMultiKueue(t *testing.T) {
	ac := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": map[string]any{"name": "mk"},
		"spec": map[string]any{"controllerName": "kueue.x-k8s.io/multikueue",
			"parameters": map[string]any{"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "fleet"}},
	}}
	obj, dropped, err := translate(kindNamed(t, "AdmissionCheck"), ac)
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*musterv1beta1.AdmissionCheck)
	if got.Spec.ControllerName != musterv1beta1.MultiClusterControllerName || got.Spec.Parameters.Kind != "MultiClusterConfig" || len(dropped) != 0 {
		t.Errorf("translated %+v (dropped %v)", got.Spec, dropped)
	}
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueCluster", "metadata": map[string]any{"name": "w1"},
		"spec": map[string]any{"clusterSource": map[string]any{"kubeConfig": map[string]any{"location": "w1-secret", "locationType": "Secret"}}},
	}}
	obj, dropped, err = translate(kindNamed(t, "MultiKueueCluster"), cluster)
	if err != nil {
		t.Fatal(err)
	}
	mc := obj.(*musterv1beta1.MultiCluster)
	if mc.Spec.KubeConfig.Location != "w1-secret" || mc.Kind != "MultiCluster" || len(dropped) != 0 {
		t.Errorf("translated %+v %s (dropped %v)", mc.Spec, mc.Kind, dropped)
	}
	cfg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueConfig", "metadata": map[string]any{"name": "fleet"},
		"spec": map[string]any{"clusters": []any{"w1", "w2"}},
	}}
	obj, _, err = translate(kindNamed(t, "MultiKueueConfig"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c := obj.(*musterv1beta1.MultiClusterConfig); len(c.Spec.Clusters) != 2 || c.Kind != "MultiClusterConfig" {
		t.Errorf("translated %+v", c)
	}
}
