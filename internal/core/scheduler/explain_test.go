package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/queue"
)

// explainQueue is a 4-GPU queue with the given preemption policy holding
// the given admitted workloads.
func explainQueue(p core.Preemption, holding ...*core.Workload) *testCache {
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 4))
	cq.Preemption = p
	c := cacheWith([]*core.ClusterQueue{cq}, "a100")
	for _, w := range holding {
		c.AddOrUpdateWorkload(coretest.Admitted(w, "cq", "a100"))
	}
	return c
}

func victimKeys(vs []Victim) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Workload.Key)
	}
	return out
}

func TestExplain(t *testing.T) {
	lower := core.Preemption{WithinClusterQueue: core.PreemptLowerPriority}
	minutes := func(m int) time.Time { return coretest.Epoch.Add(time.Duration(m) * time.Minute) }
	protectedLow := coretest.GPUWorkload("low", 0, 0, 2, 1)
	protectedLow.AdmittedAt = minutes(0)
	tests := []struct {
		name        string
		policy      core.Preemption
		holding     []*core.Workload
		ask         *core.Workload
		wantFit     FitMode
		wantVictims []string
		wantHeld    int // Candidates
		wantAllowed int
		wantNever   bool // NoFit.Never
		wantNoneP   bool // NeverPreempts
		wantProtect []string
	}{{
		name: "fits in free quota", policy: lower,
		holding: []*core.Workload{coretest.GPUWorkload("low", 0, 0, 2, 1)}, ask: coretest.GPUWorkload("new", 10, 1, 2, 1),
		wantFit: Fit,
	}, {
		name: "lower priority is preempted, the newest first", policy: lower,
		holding: []*core.Workload{coretest.GPUWorkload("low-old", 0, 0, 2, 1), coretest.GPUWorkload("low-new", 0, 1, 2, 1)}, ask: coretest.GPUWorkload("high", 10, 2, 2, 1),
		wantFit: FitPreempt, wantVictims: []string{"ns/low-new"}, wantHeld: 2, wantAllowed: 2,
	}, {
		name: "higher priority holds the room", policy: lower,
		holding: []*core.Workload{coretest.GPUWorkload("high", 10, 0, 4, 1)}, ask: coretest.GPUWorkload("low", 0, 1, 2, 1),
		wantFit: FitPreempt, wantHeld: 1, wantAllowed: 0,
	}, {
		name:    "a queue that never preempts says so",
		holding: []*core.Workload{coretest.GPUWorkload("low", 0, 0, 4, 1)}, ask: coretest.GPUWorkload("high", 10, 1, 2, 1),
		wantFit: Unfit, wantNoneP: true, // a queue that may not preempt does not fit by preempting
	}, {
		name: "more than the quota can ever hold", policy: lower,
		ask:     coretest.GPUWorkload("huge", 10, 1, 8, 1),
		wantFit: Unfit, wantNever: true,
	}, {
		name: "a victim within its minimum runtime", policy: core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, MinRuntime: 10 * time.Minute},
		holding: []*core.Workload{protectedLow, coretest.GPUWorkload("other", 20, 0, 2, 1)}, ask: coretest.GPUWorkload("high", 10, 1, 2, 1),
		wantFit: FitPreempt, wantHeld: 2, wantAllowed: 1, wantProtect: []string{"ns/low"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := explainQueue(tt.policy, tt.holding...).Snapshot()
			s.SetNow(minutes(4))
			e, ok := Explain(s, "cq", tt.ask)
			if !ok {
				t.Fatal("queue not found")
			}
			if e.Fit != tt.wantFit {
				t.Errorf("fit %d, want %d", e.Fit, tt.wantFit)
			}
			if got := victimKeys(e.Victims); !slices.Equal(got, tt.wantVictims) {
				t.Errorf("victims %v, want %v", got, tt.wantVictims)
			}
			if got := victimKeys(e.Protected); !slices.Equal(got, tt.wantProtect) {
				t.Errorf("protected %v, want %v", got, tt.wantProtect)
			}
			if len(tt.wantProtect) > 0 && e.ProtectedFor != 6*time.Minute {
				t.Errorf("protected for %s, want 6m", e.ProtectedFor)
			}
			if e.Candidates != tt.wantHeld || e.Allowed != tt.wantAllowed {
				t.Errorf("candidates %d, allowed %d; want %d, %d", e.Candidates, e.Allowed, tt.wantHeld, tt.wantAllowed)
			}
			if (e.NoFit != nil && e.NoFit.Never) != tt.wantNever {
				t.Errorf("never %v, want %v (%+v)", !tt.wantNever, tt.wantNever, e.NoFit)
			}
			if e.NeverPreempts != tt.wantNoneP {
				t.Errorf("never preempts %v, want %v", e.NeverPreempts, tt.wantNoneP)
			}
		})
	}
}

// TestExplainPicksTheCyclesVictims (property): for a workload that a cycle
// tries first, Explain names exactly the victims the cycle evicts, and the
// snapshot is left as it was (a second Explain says the same).
func TestExplainPicksTheCyclesVictims(t *testing.T) {
	for i := range 300 {
		cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 8))
		cq.Preemption = core.Preemption{WithinClusterQueue: core.PreemptionPolicy(i % 3)}
		c := cacheWith([]*core.ClusterQueue{cq}, "a100")
		for j := range 4 {
			w := coretest.Admitted(coretest.GPUWorkload(fmt.Sprintf("w%d", j), int32((i+j*5)%7), j, int32(1+(i+j)%2), 1), "cq", "a100")
			w.AdmittedAt = coretest.Epoch.Add(time.Duration((i*3+j)%5) * time.Minute)
			c.AddOrUpdateWorkload(w)
		}
		ask := coretest.GPUWorkload("ask", int32(i%6), 10, int32(1+i%8), 1)
		s := c.Snapshot()
		s.SetNow(coretest.Epoch.Add(time.Hour))
		e, _ := Explain(s, "cq", ask)
		again, _ := Explain(s, "cq", ask)
		d := Schedule(s, map[string][]*core.Workload{"cq": {ask}})[0]
		if got, want := victimKeys(e.Victims), victimKeys(d.Victims); !slices.Equal(got, want) {
			t.Fatalf("case %d: explain picks %v, the cycle evicts %v (%s)", i, got, want, d.Message())
		}
		if !slices.Equal(victimKeys(again.Victims), victimKeys(e.Victims)) || again.Fit != e.Fit {
			t.Fatalf("case %d: a second Explain differs: the snapshot was changed", i)
		}
		if (e.Fit == Fit) != (d.Admission != nil) {
			t.Fatalf("case %d: explain fit %d, cycle admitted %v", i, e.Fit, d.Admission != nil)
		}
	}
}

// TestQueuesLookup: a pending workload is found with its ClusterQueue and
// the time it first needed preemption; an unknown one is not.
func TestQueuesLookup(t *testing.T) {
	q := queue.NewQueues()
	q.UpsertClusterQueue("cq", core.BestEffortFIFO)
	q.UpsertLocalQueue("ns", "lq", "cq")
	w := coretest.GPUWorkload("a", 0, 0, 1, 1)
	q.AddOrUpdate(w)
	q.NeedsPreemption(w.Key, coretest.Epoch)
	got, cq, ok := q.Lookup(w.Key)
	if !ok || cq != "cq" || !got.NeedsPreemptionSince.Equal(coretest.Epoch) {
		t.Fatalf("lookup: %v %q %v", got, cq, ok)
	}
	if _, _, ok := q.Lookup("ns/none"); ok {
		t.Fatal("found a workload that is not pending")
	}
}
