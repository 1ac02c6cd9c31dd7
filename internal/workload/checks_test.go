package workload

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

const (
	pendingCheck  = musterv1beta1.CheckStatePending
	readyCheck    = musterv1beta1.CheckStateReady
	retryCheck    = musterv1beta1.CheckStateRetry
	rejectedCheck = musterv1beta1.CheckStateRejected
)

// reserved is a workload that reserved quota and waits for checks.
func reserved(checks ...string) *musterv1beta1.Workload {
	wl := pending()
	ReserveForChecks(wl, admission(), checks, t0)
	return wl
}

func answer(wl *musterv1beta1.Workload, check string, state musterv1beta1.CheckState) *musterv1beta1.Workload {
	SetCheckState(wl, musterv1beta1.AdmissionCheckState{Name: musterv1beta1.AdmissionCheckReference(check), State: state, Message: string(state)}, t0)
	return wl
}

func delayed(wl *musterv1beta1.Workload) {
	wl.Status.Admission.PodSetAssignments[0].DelayedTopologyRequest = ptr.To(musterv1beta1.DelayedTopologyRequestPending)
}

func checkStates(wl *musterv1beta1.Workload) []musterv1beta1.CheckState {
	var out []musterv1beta1.CheckState
	for _, c := range wl.Status.AdmissionChecks {
		out = append(out, c.State)
	}
	return out
}

func TestReserveForChecksAdmitsOnlyWithoutChecks(t *testing.T) {
	for name, tc := range map[string]struct {
		checks       []string
		wantAdmitted metav1.ConditionStatus
		wantReason   string
		wantStates   []musterv1beta1.CheckState
	}{
		"no checks: one write reserves and admits": {nil, metav1.ConditionTrue, musterv1beta1.ReasonAdmitted, nil},
		"two checks: reserved, each Pending":       {[]string{"prov", "approval"}, metav1.ConditionFalse, musterv1beta1.ReasonUnsatisfiedChecks, []musterv1beta1.CheckState{pendingCheck, pendingCheck}},
	} {
		t.Run(name, func(t *testing.T) {
			wl := reserved(tc.checks...)
			c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadAdmitted)
			if c == nil || c.Status != tc.wantAdmitted || c.Reason != tc.wantReason {
				t.Fatalf("Admitted = %+v, want %s %s", c, tc.wantAdmitted, tc.wantReason)
			}
			if !HoldsQuota(wl) {
				t.Error("a reservation waiting for checks holds its quota")
			}
			if got := checkStates(wl); !slices.Equal(got, tc.wantStates) {
				t.Errorf("checks = %v, want %v", got, tc.wantStates)
			}
		})
	}
}

func TestAdmitCheckedWaitsForEveryCheckAndThePlacement(t *testing.T) {
	for name, tc := range map[string]struct {
		wl        *musterv1beta1.Workload
		wantAdmit bool
	}{
		"all Ready":                      {answer(answer(reserved("a", "b"), "a", readyCheck), "b", readyCheck), true},
		"one still Pending":              {answer(reserved("a", "b"), "a", readyCheck), false},
		"one Retry":                      {answer(answer(reserved("a", "b"), "a", readyCheck), "b", retryCheck), false},
		"Ready but placement delayed":    {with(answer(reserved("a"), "a", readyCheck), delayed), false},
		"Ready but evicted meanwhile":    {with(answer(reserved("a"), "a", readyCheck), func(wl *musterv1beta1.Workload) { Evict(wl, musterv1beta1.ReasonPreempted, "x", t0) }), false},
		"already admitted: no new write": {admitted(), false},
		"pending: nothing to admit":      {pending(), false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := AdmitChecked(tc.wl, now); got != tc.wantAdmit {
				t.Fatalf("AdmitChecked = %v, want %v", got, tc.wantAdmit)
			}
			if tc.wantAdmit && !IsAdmitted(tc.wl) {
				t.Error("admitted workload is not IsAdmitted")
			}
		})
	}
}

func TestFailedCheckPrefersARejection(t *testing.T) {
	for name, tc := range map[string]struct {
		wl   *musterv1beta1.Workload
		want string
	}{
		"none failed":          {answer(reserved("a", "b"), "a", readyCheck), ""},
		"a retry":              {answer(reserved("a", "b"), "b", retryCheck), "b"},
		"rejection over retry": {answer(answer(reserved("a", "b"), "a", retryCheck), "b", rejectedCheck), "b"},
	} {
		t.Run(name, func(t *testing.T) {
			got := ""
			if c := FailedCheck(tc.wl); c != nil {
				got = string(c.Name)
			}
			if got != tc.want {
				t.Fatalf("FailedCheck = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRetryEvictsThenRequeueResetsEveryCheck(t *testing.T) {
	wl := answer(answer(reserved("a", "b"), "a", readyCheck), "b", retryCheck)
	if !EvictForCheck(wl, string(FailedCheck(wl).Name), now.Add(60e9), now) {
		t.Fatal("EvictForCheck changed nothing")
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted); c == nil || c.Reason != musterv1beta1.ReasonAdmissionCheck {
		t.Fatalf("Evicted = %+v, want reason %s", c, musterv1beta1.ReasonAdmissionCheck)
	}
	if got := RequeueAt(wl); !got.Equal(now.Add(60e9)) || CheckRetries(FindCheck(wl, "b")) != 1 || RequeueCount(wl) != 0 {
		t.Errorf("backoff until %v, check b's retries %d, the workload's requeues %d (waitForPodsReady's, not the check's)",
			got, CheckRetries(FindCheck(wl, "b")), RequeueCount(wl))
	}
	Requeue(wl, now)
	if HoldsQuota(wl) {
		t.Error("quota not released")
	}
	if got := checkStates(wl); !slices.Equal(got, []musterv1beta1.CheckState{pendingCheck, pendingCheck}) {
		t.Errorf("checks after requeue = %v, want all Pending", got)
	}
	if a := FindCheck(wl, "a"); !a.LastTransitionTime.Time.Equal(now) || a.PodSetUpdates != nil {
		t.Errorf("check a was Ready: reset at %v with updates %v", a.LastTransitionTime, a.PodSetUpdates)
	}
	if CheckRetries(FindCheck(wl, "b")) != 1 {
		t.Error("the reset lost check b's retry count")
	}
}

func TestSetCheckStateKeepsTheTimeUnlessTheStateChanges(t *testing.T) {
	wl := reserved("a")
	if SetCheckState(wl, musterv1beta1.AdmissionCheckState{Name: "a", State: pendingCheck}, now) {
		t.Error("the same state again is a change")
	}
	SetCheckState(wl, musterv1beta1.AdmissionCheckState{Name: "a", State: pendingCheck, Message: "provisioning"}, now)
	if c := FindCheck(wl, "a"); !c.LastTransitionTime.Time.Equal(t0) || c.Message != "provisioning" {
		t.Errorf("a new message moved the time: %+v", c)
	}
	SetCheckState(wl, musterv1beta1.AdmissionCheckState{Name: "a", State: readyCheck}, now)
	if c := FindCheck(wl, "a"); !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("a new state kept the time: %+v", c)
	}
	if SetCheckState(wl, musterv1beta1.AdmissionCheckState{Name: "other", State: readyCheck}, now) {
		t.Error("a check the workload does not have was added")
	}
}

func TestReservingAgainKeepsNoStaleAnswer(t *testing.T) {
	wl := answer(reserved("a"), "a", readyCheck)
	Evict(wl, musterv1beta1.ReasonPreempted, "x", now)
	Requeue(wl, now)
	ReserveForChecks(wl, admission(), []string{"a"}, now)
	if IsAdmitted(wl) || AdmitChecked(wl, now) {
		t.Fatal("a preempted workload was admitted on its previous answer")
	}
}

func TestSyncChecksFollowsTheQueue(t *testing.T) {
	wl := answer(reserved("a", "b"), "a", readyCheck)
	if SyncChecks(wl, []string{"a", "b"}, now) {
		t.Error("the same checks are a change")
	}
	if !SyncChecks(wl, []string{"a", "c"}, now) {
		t.Fatal("a replaced check is no change")
	}
	if got := checkStates(wl); !slices.Equal(got, []musterv1beta1.CheckState{readyCheck, pendingCheck}) {
		t.Errorf("checks = %v, want a still Ready and c Pending", got)
	}
	if SyncChecks(pending(), []string{"a"}, now) {
		t.Error("a workload without quota got checks")
	}
	SyncChecks(wl, nil, now)
	if !AdmitChecked(wl, now) {
		t.Error("a workload whose queue has no checks left is not admitted")
	}
}

func TestACheckLeavingReadyKeepsWhatItAddedToThePods(t *testing.T) {
	wl := reserved("prov")
	SetCheckState(wl, musterv1beta1.AdmissionCheckState{Name: "prov", State: readyCheck,
		PodSetUpdates: []musterv1beta1.PodSetUpdate{{Name: "main", Annotations: map[string]string{"consume": "pr-1"}}}}, now)
	AdmitChecked(wl, now)
	SetCheckState(wl, musterv1beta1.AdmissionCheckState{Name: "prov", State: retryCheck, Message: "capacity revoked"}, now)
	if u := FindCheck(wl, "prov").PodSetUpdates; len(u) != 1 {
		t.Fatalf("updates = %v: the running job's annotations could not be taken out again", u)
	}
}
