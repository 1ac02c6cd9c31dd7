package job

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// The worker's copy of a dispatched Job: the manager's spec without what
// the manager's API server generated or what would keep the worker's Job
// controller away, marked for the worker's Muster.
func TestRemoteCopy(t *testing.T) {
	j := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "train", Namespace: "team", UID: "manager-uid", ResourceVersion: "42",
			Labels:          map[string]string{musterv1beta1.QueueNameLabel: "main"},
			OwnerReferences: []metav1.OwnerReference{{Name: "parent"}},
		},
		Spec: batchv1.JobSpec{
			ManagedBy: ptr.To(musterv1beta1.MultiClusterManagedBy),
			Suspend:   ptr.To(false),
			Selector:  &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "manager-uid"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
				batchv1.ControllerUidLabel: "manager-uid", "controller-uid": "manager-uid", "job-name": "train",
				batchv1.JobNameLabel: "train", "app": "trainer",
			}}},
		},
		Status: batchv1.JobStatus{Active: 3},
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(j)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := Kind.MultiCluster.RemoteCopy(&unstructured.Unstructured{Object: u}, "job-train-abcde", "muster")
	if err != nil {
		t.Fatal(err)
	}
	var got batchv1.Job
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cp.Object, &got); err != nil {
		t.Fatal(err)
	}
	switch {
	case got.Spec.ManagedBy != nil:
		t.Errorf("managedBy = %q, want unset", *got.Spec.ManagedBy)
	case got.Spec.Selector != nil:
		t.Errorf("selector copied: %v", got.Spec.Selector)
	case got.UID != "" || got.ResourceVersion != "" || len(got.OwnerReferences) > 0:
		t.Errorf("server metadata copied: %+v", got.ObjectMeta)
	case got.Status.Active != 0:
		t.Error("status copied")
	case got.Labels[musterv1beta1.MultiClusterOriginLabel] != "muster" || got.Labels[musterv1beta1.QueueNameLabel] != "main":
		t.Errorf("labels = %v", got.Labels)
	case jobframework.PrebuiltWorkloadName(&got) != "job-train-abcde":
		t.Errorf("prebuilt workload = %q", jobframework.PrebuiltWorkloadName(&got))
	}
	want := map[string]string{batchv1.JobNameLabel: "train", "app": "trainer"}
	if l := got.Spec.Template.Labels; len(l) != len(want) || l["app"] != "trainer" || l[batchv1.JobNameLabel] != "train" {
		t.Errorf("template labels = %v, want %v", l, want)
	}
	if !Kind.MultiCluster.Dispatched(&unstructured.Unstructured{Object: u}) {
		t.Error("a Job managed by muster.dev/multicluster is not dispatched")
	}
	if Kind.MultiCluster.Suspended(&unstructured.Unstructured{Object: u}) {
		t.Error("an unsuspended Job reads as suspended")
	}
}
