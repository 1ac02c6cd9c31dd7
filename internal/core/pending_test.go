package core

import (
	"testing"
	"time"
)

func short(flavor string, need, available int64) *NoFit {
	return &NoFit{PodSet: "main", Reasons: []Reason{{Resource: "nvidia.com/gpu", Flavor: flavor, Need: need, Available: available, Quota: 8}}}
}

// TestPendingMessage: every reason reads as users have read it.
func TestPendingMessage(t *testing.T) {
	for _, tc := range []struct {
		p    Pending
		want string
	}{
		{Pending{Kind: QueueInactive, ClusterQueue: "cq", Detail: "ClusterQueue is stopped"}, "ClusterQueue cq is inactive: ClusterQueue is stopped"},
		{Pending{Kind: LocalQueueHeld, LocalQueue: "lq"}, "LocalQueue lq is stopped"},
		{Pending{Kind: NamespaceNotSelected, Namespace: "ns", ClusterQueue: "cq"}, "namespace ns is not selected by the namespaceSelector of ClusterQueue cq"},
		{Pending{Kind: WaitingForPodsReady, Workloads: []string{"ns/a"}}, "waiting for the pods of admitted workload ns/a to be ready (waitForPodsReady.blockAdmission)"},
		{Pending{Kind: BehindPreemptor, ClusterQueue: "cq", Workloads: []string{"ns/a"}}, "waiting behind higher-priority workload ns/a, which is waiting for room in ClusterQueue cq"},
		{Pending{Kind: BlockedByHead, ClusterQueue: "cq", Workloads: []string{"ns/a"}}, "blocked by workload ns/a at the head of StrictFIFO ClusterQueue cq"},
		{Pending{Kind: NoQuota, NoFit: short("a100", 4, 2)},
			"waiting for quota: couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor a100: 4 requested, 2 available (quota 8)"},
		{Pending{Kind: WaitingToPreempt, Wait: 1500 * time.Millisecond, NoFit: short("a100", 4, 2)},
			"waiting for quota to free before preempting (2s at most): couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor a100: 4 requested, 2 available (quota 8)"},
		{Pending{Kind: ReclaimInCohort, Cohort: "org"}, "waiting for preemption: another workload is taking back quota in cohort org this cycle"},
		{Pending{Kind: VictimsLeaving, Workloads: []string{"ns/a", "ns/b"}}, "waiting for preemption: 2 workload(s) being evicted to make room (ns/a, ns/b)"},
		{Pending{Kind: Preempting, Workloads: []string{"ns/a"}}, "waiting for preemption: evicting 1 workload(s) to make room (ns/a)"},
		{Pending{Kind: EvictionRetry, Workloads: []string{"ns/a"}},
			"preemption in progress: could not evict ns/a yet (the victim's admission is still being written, or it changed); retrying"},
	} {
		if got := tc.p.Message(); got != tc.want {
			t.Errorf("kind %d: %q, want %q", tc.p.Kind, got, tc.want)
		}
	}
}

// TestPendingComparison: Equal is the same words; SameButAmounts the same
// words but for quantities and waits.
func TestPendingComparison(t *testing.T) {
	base := Pending{Kind: NoQuota, NoFit: short("a100", 4, 2)}
	for name, tc := range map[string]struct {
		other             Pending
		equal, butAmounts bool
	}{
		"identical":         {Pending{Kind: NoQuota, NoFit: short("a100", 4, 2)}, true, true},
		"other available":   {Pending{Kind: NoQuota, NoFit: short("a100", 4, 1)}, false, true},
		"other request":     {Pending{Kind: NoQuota, NoFit: short("a100", 8, 2)}, false, true},
		"other flavor":      {Pending{Kind: NoQuota, NoFit: short("a200", 4, 2)}, false, false},
		"other kind":        {Pending{Kind: WaitingToPreempt, NoFit: short("a100", 4, 2)}, false, false},
		"other pod set":     {Pending{Kind: NoQuota, NoFit: &NoFit{PodSet: "workers", Reasons: short("a100", 4, 2).Reasons}}, false, false},
		"never fits":        {Pending{Kind: NoQuota, NoFit: &NoFit{PodSet: "main", Never: true, Reasons: short("a100", 4, 2).Reasons}}, false, false},
		"one more shortage": {Pending{Kind: NoQuota, NoFit: &NoFit{PodSet: "main", Reasons: append(short("a100", 4, 2).Reasons, short("a200", 4, 2).Reasons...)}}, false, false},
		"with totals":       {Pending{Kind: NoQuota, NoFit: &NoFit{PodSet: "main", Reasons: short("a100", 4, 2).Reasons, Totals: Requests{"nvidia.com/gpu": 8}}}, false, false},
		"other victims":     {Pending{Kind: Preempting, Workloads: []string{"ns/b"}}, false, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := base.Equal(&tc.other); got != tc.equal {
				t.Errorf("Equal = %v, want %v", got, tc.equal)
			}
			if got := base.SameButAmounts(&tc.other); got != tc.butAmounts {
				t.Errorf("SameButAmounts = %v, want %v", got, tc.butAmounts)
			}
		})
	}
	wait := func(d time.Duration) Pending {
		return Pending{Kind: WaitingToPreempt, Wait: d, NoFit: short("a100", 4, 2)}
	}
	a, b := wait(time.Second), wait(2*time.Second)
	if a.Equal(&b) || !a.SameButAmounts(&b) {
		t.Errorf("another wait: Equal %v, SameButAmounts %v; want false, true", a.Equal(&b), a.SameButAmounts(&b))
	}
}
