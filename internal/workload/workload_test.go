package workload

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

var (
	t0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now = t0.Add(time.Hour)
)

// phases of a workload's life, built as the transitions leave them.
func pending() *musterv1beta1.Workload {
	return &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Generation: 3}}
}

func admission() *musterv1beta1.Admission {
	return &musterv1beta1.Admission{ClusterQueue: "cq", PodSetAssignments: []musterv1beta1.PodSetAssignment{{Name: "main"}}}
}

func admitted() *musterv1beta1.Workload {
	wl := pending()
	Reserve(wl, admission(), t0)
	Admit(wl, t0)
	return wl
}

func evicting(reason string) *musterv1beta1.Workload {
	wl := admitted()
	Evict(wl, reason, "told to stop", t0)
	return wl
}

func requeued() *musterv1beta1.Workload {
	wl := evicting(musterv1beta1.ReasonPreempted)
	Requeue(wl, t0)
	return wl
}

func finished() *musterv1beta1.Workload {
	wl := admitted()
	Finish(wl, musterv1beta1.ReasonSucceeded, "done", t0)
	return wl
}

func with(wl *musterv1beta1.Workload, f func(*musterv1beta1.Workload)) *musterv1beta1.Workload {
	f(wl)
	return wl
}

func inactive(wl *musterv1beta1.Workload) { wl.Spec.Active = new(bool) }

func TestPredicates(t *testing.T) {
	deleting := func(wl *musterv1beta1.Workload) { wl.DeletionTimestamp = &metav1.Time{Time: t0} }
	finalized := func(wl *musterv1beta1.Workload) { wl.Finalizers = []string{musterv1beta1.ResourceInUseFinalizer} }
	type want struct{ holds, admitted, evicted, evicting, finished, active, gone bool }
	for name, tc := range map[string]struct {
		wl   *musterv1beta1.Workload
		want want
	}{
		"pending":                    {pending(), want{active: true}},
		"admitted":                   {admitted(), want{holds: true, admitted: true, active: true}},
		"evicting":                   {evicting(musterv1beta1.ReasonPreempted), want{holds: true, evicted: true, evicting: true, active: true}},
		"requeued":                   {requeued(), want{evicted: true, active: true}},
		"finished":                   {finished(), want{admitted: true, finished: true, active: true, gone: true}},
		"deactivated":                {with(pending(), inactive), want{}},
		"deleted while pending":      {with(pending(), deleting), want{active: true, gone: true}},
		"deleted, job still runs":    {with(with(admitted(), deleting), finalized), want{holds: true, admitted: true, active: true}},
		"deleted, job stopped":       {with(admitted(), deleting), want{holds: true, admitted: true, active: true, gone: true}},
		"admitted, not yet Admitted": {with(pending(), func(wl *musterv1beta1.Workload) { wl.Status.Admission = admission() }), want{holds: true, active: true}},
	} {
		t.Run(name, func(t *testing.T) {
			got := want{HoldsQuota(tc.wl), IsAdmitted(tc.wl), IsEvicted(tc.wl), IsEvicting(tc.wl), IsFinished(tc.wl), IsActive(tc.wl), Gone(tc.wl)}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRequeueState(t *testing.T) {
	wl := admitted()
	if !RequeueAt(wl).IsZero() || RequeueCount(wl) != 0 {
		t.Fatalf("a workload never requeued has requeue time %s, count %d", RequeueAt(wl), RequeueCount(wl))
	}
	EvictWithBackoff(wl, "pods not ready", 2, now.Add(time.Minute), now)
	if !RequeueAt(wl).Equal(now.Add(time.Minute)) || RequeueCount(wl) != 2 {
		t.Errorf("requeue time %s, count %d, want %s, 2", RequeueAt(wl), RequeueCount(wl), now.Add(time.Minute))
	}
}

// cond is a condition as a test expects it: status and reason.
type cond struct {
	status metav1.ConditionStatus
	reason string
}

// conditions maps condition type to status and reason; absent types are
// missing.
type conditions map[string]cond

func conditionsOf(wl *musterv1beta1.Workload) conditions {
	out := conditions{}
	for _, c := range wl.Status.Conditions {
		out[c.Type] = cond{c.Status, c.Reason}
	}
	return out
}

var (
	T = metav1.ConditionTrue
	F = metav1.ConditionFalse
)

func TestTransitions(t *testing.T) {
	ready := func(wl *musterv1beta1.Workload) { SetPodsReady(wl, true, t0) }
	for name, tc := range map[string]struct {
		from       *musterv1beta1.Workload
		do         func(*musterv1beta1.Workload) bool
		changed    bool
		want       conditions
		admission  bool
		requeueSet bool
	}{
		"reserve a pending workload": {
			from: pending(), do: func(wl *musterv1beta1.Workload) bool { return Reserve(wl, admission(), now) }, changed: true, admission: true,
			want: conditions{musterv1beta1.WorkloadQuotaReserved: {T, musterv1beta1.ReasonQuotaReserved}},
		},
		"reserve a requeued workload clears its eviction and readiness, keeps when it was queued": {
			from: with(requeued(), ready), do: func(wl *musterv1beta1.Workload) bool { return Reserve(wl, admission(), now) }, changed: true, admission: true,
			want: conditions{
				musterv1beta1.WorkloadQuotaReserved: {T, musterv1beta1.ReasonQuotaReserved},
				musterv1beta1.WorkloadAdmitted:      {F, musterv1beta1.ReasonEvicted},
				musterv1beta1.WorkloadRequeued:      {T, musterv1beta1.ReasonPreempted},
				musterv1beta1.WorkloadPodsReady:     {F, musterv1beta1.ReasonWaitForStart},
			},
		},
		"admit a reserved workload": {
			from: with(pending(), func(wl *musterv1beta1.Workload) { Reserve(wl, admission(), t0) }), do: func(wl *musterv1beta1.Workload) bool { return Admit(wl, now) },
			changed: true, admission: true,
			want: conditions{musterv1beta1.WorkloadQuotaReserved: {T, musterv1beta1.ReasonQuotaReserved}, musterv1beta1.WorkloadAdmitted: {T, musterv1beta1.ReasonAdmitted}},
		},
		"admit without a reservation": {
			from: pending(), do: func(wl *musterv1beta1.Workload) bool { return Admit(wl, now) }, want: conditions{},
		},
		"set pending": {
			from: pending(), do: func(wl *musterv1beta1.Workload) bool {
				return SetPending(wl, musterv1beta1.ReasonPending, "waiting", now)
			}, changed: true,
			want: conditions{musterv1beta1.WorkloadQuotaReserved: {F, musterv1beta1.ReasonPending}},
		},
		"set the same pending reason again": {
			from: with(pending(), func(wl *musterv1beta1.Workload) { SetPending(wl, musterv1beta1.ReasonPending, "waiting", t0) }),
			do: func(wl *musterv1beta1.Workload) bool {
				return SetPending(wl, musterv1beta1.ReasonPending, "waiting", now)
			},
			want: conditions{musterv1beta1.WorkloadQuotaReserved: {F, musterv1beta1.ReasonPending}},
		},
		"set another pending message": {
			from: with(pending(), func(wl *musterv1beta1.Workload) { SetPending(wl, musterv1beta1.ReasonPending, "waiting", t0) }),
			do: func(wl *musterv1beta1.Workload) bool {
				return SetPending(wl, musterv1beta1.ReasonBackoff, "backing off", now)
			}, changed: true,
			want: conditions{musterv1beta1.WorkloadQuotaReserved: {F, musterv1beta1.ReasonBackoff}},
		},
		"evict an admitted workload": {
			from: admitted(), do: func(wl *musterv1beta1.Workload) bool {
				return Evict(wl, musterv1beta1.ReasonClusterQueueStopped, "draining", now)
			}, changed: true, admission: true,
			want: conditions{
				musterv1beta1.WorkloadQuotaReserved: {T, musterv1beta1.ReasonQuotaReserved},
				musterv1beta1.WorkloadAdmitted:      {T, musterv1beta1.ReasonAdmitted},
				musterv1beta1.WorkloadEvicted:       {T, musterv1beta1.ReasonClusterQueueStopped},
			},
		},
		"evict a pending workload": {
			from: pending(), do: func(wl *musterv1beta1.Workload) bool { return Evict(wl, musterv1beta1.ReasonJobChanged, "x", now) }, want: conditions{},
		},
		"evict twice alike": {
			from: evicting(musterv1beta1.ReasonJobChanged), do: func(wl *musterv1beta1.Workload) bool {
				return Evict(wl, musterv1beta1.ReasonJobChanged, "told to stop", now)
			}, admission: true,
			want: conditions{
				musterv1beta1.WorkloadQuotaReserved: {T, musterv1beta1.ReasonQuotaReserved},
				musterv1beta1.WorkloadAdmitted:      {T, musterv1beta1.ReasonAdmitted},
				musterv1beta1.WorkloadEvicted:       {T, musterv1beta1.ReasonJobChanged},
			},
		},
		"preempt": {
			from: admitted(), do: func(wl *musterv1beta1.Workload) bool {
				return Preempt(wl, musterv1beta1.ReasonInClusterQueue, "room for ns/high", now)
			},
			changed: true, admission: true,
			want: conditions{
				musterv1beta1.WorkloadQuotaReserved: {T, musterv1beta1.ReasonQuotaReserved},
				musterv1beta1.WorkloadAdmitted:      {T, musterv1beta1.ReasonAdmitted},
				musterv1beta1.WorkloadEvicted:       {T, musterv1beta1.ReasonPreempted},
				musterv1beta1.WorkloadPreempted:     {T, musterv1beta1.ReasonInClusterQueue},
			},
		},
		"evict with backoff": {
			from: admitted(), do: func(wl *musterv1beta1.Workload) bool {
				return EvictWithBackoff(wl, "pods not ready", 1, now.Add(time.Minute), now)
			}, changed: true, admission: true, requeueSet: true,
			want: conditions{
				musterv1beta1.WorkloadQuotaReserved: {T, musterv1beta1.ReasonQuotaReserved},
				musterv1beta1.WorkloadAdmitted:      {T, musterv1beta1.ReasonAdmitted},
				musterv1beta1.WorkloadEvicted:       {T, musterv1beta1.ReasonPodsReadyTimeout},
			},
		},
		"deactivate": {
			from: admitted(), do: func(wl *musterv1beta1.Workload) bool {
				return Deactivate(wl, musterv1beta1.ReasonRequeuingLimitExceeded, "too many requeues", now)
			}, changed: true, admission: true,
			want: conditions{
				musterv1beta1.WorkloadQuotaReserved: {T, musterv1beta1.ReasonQuotaReserved},
				musterv1beta1.WorkloadAdmitted:      {T, musterv1beta1.ReasonAdmitted},
				musterv1beta1.WorkloadEvicted:       {T, musterv1beta1.ReasonRequeuingLimitExceeded},
			},
		},
		"requeue an evicted workload": {
			from: with(evicting(musterv1beta1.ReasonPreempted), ready), do: func(wl *musterv1beta1.Workload) bool { return Requeue(wl, now) }, changed: true,
			want: conditions{
				musterv1beta1.WorkloadQuotaReserved: {F, musterv1beta1.ReasonPending},
				musterv1beta1.WorkloadAdmitted:      {F, musterv1beta1.ReasonEvicted},
				musterv1beta1.WorkloadEvicted:       {T, musterv1beta1.ReasonPreempted},
				musterv1beta1.WorkloadRequeued:      {T, musterv1beta1.ReasonPreempted},
				musterv1beta1.WorkloadPodsReady:     {F, musterv1beta1.ReasonWaitForStart},
			},
		},
		"requeue a deactivated workload": {
			from: with(evicting(musterv1beta1.ReasonInactiveWorkload), inactive), do: func(wl *musterv1beta1.Workload) bool { return Requeue(wl, now) }, changed: true,
			want: conditions{
				musterv1beta1.WorkloadQuotaReserved: {F, musterv1beta1.ReasonPending},
				musterv1beta1.WorkloadAdmitted:      {F, musterv1beta1.ReasonEvicted},
				musterv1beta1.WorkloadEvicted:       {T, musterv1beta1.ReasonInactiveWorkload},
				musterv1beta1.WorkloadRequeued:      {F, musterv1beta1.ReasonInactiveWorkload},
			},
		},
		"requeue a pending workload": {
			from: pending(), do: func(wl *musterv1beta1.Workload) bool { return Requeue(wl, now) }, want: conditions{},
		},
		"finish": {
			from: admitted(), do: func(wl *musterv1beta1.Workload) bool { return Finish(wl, musterv1beta1.ReasonFailedToStart, "no", now) },
			changed: true, admission: true,
			want: conditions{
				musterv1beta1.WorkloadQuotaReserved: {T, musterv1beta1.ReasonQuotaReserved},
				musterv1beta1.WorkloadAdmitted:      {T, musterv1beta1.ReasonAdmitted},
				musterv1beta1.WorkloadFinished:      {T, musterv1beta1.ReasonFailedToStart},
			},
		},
		"finish a finished workload": {
			from: finished(), do: func(wl *musterv1beta1.Workload) bool { return Finish(wl, musterv1beta1.ReasonFailed, "again", now) }, admission: true,
			want: conditions{
				musterv1beta1.WorkloadQuotaReserved: {T, musterv1beta1.ReasonQuotaReserved},
				musterv1beta1.WorkloadAdmitted:      {T, musterv1beta1.ReasonAdmitted},
				musterv1beta1.WorkloadFinished:      {T, musterv1beta1.ReasonSucceeded},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			wl := tc.from
			if changed := tc.do(wl); changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			got := conditionsOf(wl)
			if len(got) != len(tc.want) {
				t.Errorf("conditions %v, want %v", got, tc.want)
			}
			for typ, w := range tc.want {
				if got[typ] != w {
					t.Errorf("%s = %v, want %v", typ, got[typ], w)
				}
			}
			if (wl.Status.Admission != nil) != tc.admission {
				t.Errorf("admission %v, want one: %v", wl.Status.Admission, tc.admission)
			}
			if (wl.Status.RequeueState != nil) != tc.requeueSet {
				t.Errorf("requeueState %v, want one: %v", wl.Status.RequeueState, tc.requeueSet)
			}
			for _, c := range wl.Status.Conditions {
				if c.ObservedGeneration != wl.Generation {
					t.Errorf("%s observed generation %d, want %d", c.Type, c.ObservedGeneration, wl.Generation)
				}
			}
		})
	}
}

// A condition's transition time is when its status last changed: a
// requeue is stamped with its own time (the queue orders by it), a repeated
// status keeps the old one.
func TestTransitionTimes(t *testing.T) {
	wl := requeued()
	Reserve(wl, admission(), now)
	Admit(wl, now)
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadRequeued); !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("admission moved when the workload was queued to %s, want %s", c.LastTransitionTime, t0)
	}
	Evict(wl, musterv1beta1.ReasonPreempted, "again", now)
	later := now.Add(time.Minute)
	Requeue(wl, later)
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadRequeued); !c.LastTransitionTime.Time.Equal(later) {
		t.Errorf("second requeue stamped %s, want %s", c.LastTransitionTime, later)
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted); !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("eviction stamped %s, want %s", c.LastTransitionTime, now)
	}
}

func TestSetPodsReady(t *testing.T) {
	for name, tc := range map[string]struct {
		from    *musterv1beta1.Workload
		ready   bool
		changed bool
		want    cond
	}{
		"first ready":      {admitted(), true, true, cond{T, musterv1beta1.ReasonReady}},
		"first not ready":  {admitted(), false, true, cond{F, musterv1beta1.ReasonWaitForStart}},
		"still not ready":  {with(admitted(), func(wl *musterv1beta1.Workload) { SetPodsReady(wl, false, t0) }), false, false, cond{F, musterv1beta1.ReasonWaitForStart}},
		"ready, then lost": {with(admitted(), func(wl *musterv1beta1.Workload) { SetPodsReady(wl, true, t0) }), false, true, cond{F, musterv1beta1.ReasonWaitForRecovery}},
		"still ready":      {with(admitted(), func(wl *musterv1beta1.Workload) { SetPodsReady(wl, true, t0) }), true, false, cond{T, musterv1beta1.ReasonReady}},
	} {
		t.Run(name, func(t *testing.T) {
			wl := tc.from
			if changed := SetPodsReady(wl, tc.ready, now); changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if got := conditionsOf(wl)[musterv1beta1.WorkloadPodsReady]; got != tc.want {
				t.Errorf("PodsReady = %v, want %v", got, tc.want)
			}
			if IsPodsReady(wl) != tc.ready {
				t.Errorf("IsPodsReady = %v, want %v", IsPodsReady(wl), tc.ready)
			}
		})
	}
}
