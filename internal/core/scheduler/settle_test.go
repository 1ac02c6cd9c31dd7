package scheduler

import (
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

func TestDecisionKinds(t *testing.T) {
	pending := coretest.GPUWorkload("p", 0, 0, 1, 1)
	running := coretest.Admitted(coretest.GPUWorkload("r", 0, 0, 1, 1), "cq", "a100")
	adm := running.Admission
	for _, tc := range []struct {
		name string
		d    Decision
		want DecisionKind
	}{
		{"pending, no admission", Decision{Workload: pending}, Wait},
		{"pending, admitted", Decision{Workload: pending, Admission: adm}, Admit},
		{"admitted, new placement", Decision{Workload: running, Admission: adm, Lost: []string{"n1"}}, Repair},
		{"admitted, evicted", Decision{Workload: running, Evict: NodeFailed}, Evict},
		{"pending, victims", Decision{Workload: pending, Victims: []Victim{{Workload: running}}}, Preempt},
	} {
		if got := tc.d.Kind(); got != tc.want {
			t.Errorf("%s: kind %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestSettle: a waiting workload that fits only by preempting has the time
// recorded and asks for a cycle when it may preempt; a parked one is set
// aside, until its RetryAfter when it has one; an admission parks nothing.
func TestSettle(t *testing.T) {
	tr := NewTracker(Config{})
	tr.Queues.UpsertClusterQueue("cq", core.BestEffortFIFO)
	tr.Queues.UpsertLocalQueue("ns", "lq", "cq")
	a, b, c := coretest.GPUWorkload("a", 0, 0, 1, 1), coretest.GPUWorkload("b", 0, 1, 1, 1), coretest.GPUWorkload("c", 0, 2, 1, 1)
	for _, w := range []*core.Workload{a, b, c} {
		tr.Queues.AddOrUpdate(w)
	}
	_, seq := tr.Queues.Heads()
	if again := tr.Settle(&Decision{Workload: a, NeedsPreemption: true, RetryAfter: time.Minute}, seq, coretest.Epoch); again != time.Minute {
		t.Errorf("needs preemption: again in %s", again)
	}
	if got, _, _ := tr.Queues.Lookup(a.Key); !got.NeedsPreemptionSince.Equal(coretest.Epoch) {
		t.Errorf("needs preemption since %v", got.NeedsPreemptionSince)
	}
	tr.Settle(&Decision{Workload: b, Park: true}, seq, coretest.Epoch)
	tr.Settle(&Decision{Workload: c, Park: true, RetryAfter: time.Hour}, seq, coretest.Epoch)
	if h, _ := tr.Queues.Heads(); len(h["cq"]) != 1 || h["cq"][0].Key != a.Key {
		t.Fatalf("heads %v, want only a", h["cq"])
	}
	tr.Queues.UnparkDue(coretest.Epoch.Add(time.Hour))
	if h, _ := tr.Queues.Heads(); len(h["cq"]) != 3 {
		t.Errorf("after c's RetryAfter the queue is unparked: heads %d", len(h["cq"]))
	}
	_, seq = tr.Queues.Heads()
	tr.Settle(&Decision{Workload: b, Admission: &core.Admission{ClusterQueue: "cq"}, Park: true}, seq, coretest.Epoch)
	if h, _ := tr.Queues.Heads(); len(h["cq"]) != 3 {
		t.Errorf("an admission parked its workload: heads %d", len(h["cq"]))
	}
}
