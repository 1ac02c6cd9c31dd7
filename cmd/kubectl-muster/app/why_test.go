package app

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
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

// TestWhySaysWhenItMayNotAskTheScheduler: a user without the
// explanation subresource is told so and how to check, not shown a guess.
func TestWhySaysWhenItMayNotAskTheScheduler(t *testing.T) {
	var out bytes.Buffer
	e := explanation{answerErr: apierrors.NewForbidden(schema.GroupResource{Group: "visibility.muster.dev", Resource: "workloads/explanation"}, "x", errors.New("no"))}
	e.writeSearch(&out)
	if got := out.String(); !strings.Contains(got, "you may not ask the scheduler: kubectl auth can-i get workloads.visibility.muster.dev --subresource explanation") {
		t.Errorf("output:\n%s", got)
	}
}

// TestWhyPrintsTheSchedulersVictims: the victims are the server's, in its
// order, with their queue, priority and why they may go.
func TestWhyPrintsTheSchedulersVictims(t *testing.T) {
	var out bytes.Buffer
	e := explanation{wl: &musterv1beta1.Workload{}, answer: &visibilityv1beta1.WorkloadExplanation{ClusterQueue: "gpus", PositionInClusterQueue: ptr.To[int32](2),
		Fit:       visibilityv1beta1.FitByPreempting,
		Shortages: []visibilityv1beta1.Shortage{{PodSet: "main", Message: "insufficient quota for nvidia.com/gpu in flavor a100: 4 requested, 0 available (quota 8)"}},
		Preemption: &visibilityv1beta1.PreemptionExplanation{State: visibilityv1beta1.PreemptionWouldEvict, Message: "preemption would evict 2 workload(s)",
			Victims: []visibilityv1beta1.PreemptionVictim{{Name: "b", Namespace: "ns", ClusterQueue: "gpus", Priority: 0, Reason: "InClusterQueue"},
				{Name: "a", Namespace: "other", ClusterQueue: "lender", Priority: 5, Reason: "InCohortReclamation"}}}}}
	e.writeSearch(&out)
	want := `
The scheduler's search, run now: it fits only by preempting.
Short, for pod set main:
  insufficient quota for nvidia.com/gpu in flavor a100: 4 requested, 0 available (quota 8)
Preemption: would evict 2 workload(s):
  ns/b (ClusterQueue gpus, priority 0, InClusterQueue)
  other/a (ClusterQueue lender, priority 5, InCohortReclamation)

2 workload(s) wait ahead of it in ClusterQueue gpus and are tried first (kubectl muster list workloads -A).
`
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

// TestWhyShowsTheAdmissionChecks: a workload holding quota but not yet
// admitted says which check it waits for and what the check says.
func TestWhyShowsTheAdmissionChecks(t *testing.T) {
	wl := &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "job-x", Namespace: "ns"}, Spec: musterv1beta1.WorkloadSpec{QueueName: "main"}}
	wl.Status.Admission = &musterv1beta1.Admission{ClusterQueue: "cq"}
	wl.Status.Conditions = reservedAt(3)
	wl.Status.AdmissionChecks = []musterv1beta1.AdmissionCheckState{
		{Name: "approval", State: musterv1beta1.CheckStateReady, Message: "approved"},
		{Name: "prov", State: musterv1beta1.CheckStatePending, Message: "Waiting for ProvisioningRequest job-x-prov-1 (attempt 1)"},
	}
	var out bytes.Buffer
	e := explanation{wl: wl, now: time.Now()}
	if err := e.write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Check approval:", "Ready: approved", "Check prov:", "Pending: Waiting for ProvisioningRequest job-x-prov-1", "for its admission checks to be Ready"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestWhyShowsWhereADispatchedWorkloadIs: the worker clusters a workload
// was sent to, then the one it runs in.
func TestWhyShowsWhereADispatchedWorkloadIs(t *testing.T) {
	wl := &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "job-x", Namespace: "ns"}, Spec: musterv1beta1.WorkloadSpec{QueueName: "main"}}
	wl.Status.Admission = &musterv1beta1.Admission{ClusterQueue: "cq"}
	wl.Status.Conditions = reservedAt(3)
	wl.Status.AdmissionChecks = []musterv1beta1.AdmissionCheckState{
		{Name: "dispatch", State: musterv1beta1.CheckStatePending, Message: "Waiting for one of the worker clusters [w1 w2] to admit the workload"},
	}
	wl.Status.NominatedClusterNames = []string{"w1", "w2"}
	for _, tc := range []struct {
		cluster string
		want    string
	}{{"", "worker clusters w1, w2; the first whose Muster admits it runs it"}, {"w2", "worker cluster w2 (its job's status"}} {
		wl.Status.ClusterName = tc.cluster
		var out bytes.Buffer
		e := explanation{wl: wl, now: time.Now()}
		if err := e.write(&out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("output lacks %q:\n%s", tc.want, out.String())
		}
	}
}
