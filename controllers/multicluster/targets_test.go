package multicluster

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

func reservedAt(at time.Time) *musterv1beta1.Workload {
	wl := &musterv1beta1.Workload{}
	wl.Status.Admission = &musterv1beta1.Admission{ClusterQueue: "cq"}
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{
		Type: musterv1beta1.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", LastTransitionTime: metav1.NewTime(at),
	})
	return wl
}

func TestTargets(t *testing.T) {
	start := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	clusters := []string{"a", "b", "c", "d", "e", "f", "g"}
	usable := []string{"a", "c", "d", "e", "f", "g"} // b does not answer
	cases := []struct {
		name        string
		incremental bool
		waited      time.Duration
		want        []string
		nextRound   time.Duration
	}{
		{name: "all at once", waited: time.Hour, want: usable},
		{name: "first round: the config's first three, b left out", incremental: true, waited: time.Minute, want: []string{"a", "c"}, nextRound: 4 * time.Minute},
		{name: "second round", incremental: true, waited: 6 * time.Minute, want: []string{"a", "c", "d", "e", "f"}, nextRound: 4 * time.Minute},
		{name: "every cluster", incremental: true, waited: 11 * time.Minute, want: usable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &Dispatcher{Incremental: tc.incremental, Clock: clocktesting.NewFakePassiveClock(start.Add(tc.waited))}
			got, next := d.targets(reservedAt(start), clusters, usable)
			if !slices.Equal(got, tc.want) || next != tc.nextRound {
				t.Errorf("targets = %v, next round in %s; want %v, %s", got, next, tc.want, tc.nextRound)
			}
		})
	}
}
