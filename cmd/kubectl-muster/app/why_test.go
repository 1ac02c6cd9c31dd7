package app

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// TestStatusSince: "Admitted for …" counts from the admission, not from
// the workload's creation; a pending workload never admitted counts from
// its creation.
func TestStatusSince(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	wl := &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created}}
	if got := statusSince(wl); !got.Equal(&created) {
		t.Errorf("pending since %v, want its creation", got)
	}
	wl.Status.Admission = &musterv1beta1.Admission{ClusterQueue: "cq"}
	wl.Status.Conditions = append(reservedAt(7), metav1.Condition{Type: musterv1beta1.WorkloadAdmitted, Status: metav1.ConditionTrue,
		Reason: "Admitted", LastTransitionTime: metav1.NewTime(created.Add(8 * time.Minute))})
	if got := statusSince(wl); !got.Equal(ptr.To(metav1.NewTime(created.Add(8 * time.Minute)))) {
		t.Errorf("admitted since %v, want minute 8", got)
	}
}

// TestWhyTellsAnInactiveWorkloadHowToRun: a deactivated workload is not
// "waiting for its turn": why says why it is inactive and how to
// reactivate it.
func TestWhyTellsAnInactiveWorkloadHowToRun(t *testing.T) {
	wl := &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "job-x", Namespace: "ns"},
		Spec: musterv1beta1.WorkloadSpec{Active: ptr.To(false), QueueName: "main"}}
	wl.Status.Conditions = []metav1.Condition{{Type: musterv1beta1.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending",
		Message: "Inactive after eviction (set spec.active to true to queue it again): Deactivated: held quota for 20s"}}
	var out bytes.Buffer
	e := explanation{wl: wl, now: time.Now()}
	if err := e.write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Inactive for", "Deactivated: held quota for 20s", `kubectl patch workloads.muster.dev job-x -n ns --type merge -p '{"spec":{"active":true}}'`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestWhySaysWhenItMayNotListTheAdmitted: a user who may not list
// Workloads in every namespace is told so, not that the admitted workloads
// hold none of the quota.
func TestWhySaysWhenItMayNotListTheAdmitted(t *testing.T) {
	var out bytes.Buffer
	e := explanation{admittedErr: apierrors.NewForbidden(schema.GroupResource{Group: "muster.dev", Resource: "workloads"}, "", errors.New("no"))}
	e.writeToRun(&out, []quotaRow{{flavor: "a100", resource: "nvidia.com/gpu", nominal: resource.MustParse("8"),
		reserved: resource.MustParse("8"), asked: resource.MustParse("4")}})
	if got := out.String(); !strings.Contains(got, "you may not list Workloads in every namespace") || strings.Contains(got, "hold only") {
		t.Errorf("output:\n%s", got)
	}
}
