package queue

import (
	"sort"

	"github.com/musterhq/muster/internal/core"
)

// Turns is one ClusterQueue's pending workloads by LocalQueue, each in
// priority order, and whose turn it is: the LocalQueue with workloads left
// whose score (weighted usage) is the lowest, ties going to the one whose
// head comes first by priority and age — Kueue's admission fair sharing.
// The scheduler's cycle and the order the visibility API and dashboard
// show both take turns through it, with their own scores.
type Turns struct {
	byLQ  map[string][]*core.Workload
	lqs   []string
	score func(localQueue string) float64
}

func NewTurns(wls []*core.Workload, score func(string) float64) *Turns {
	t := &Turns{byLQ: map[string][]*core.Workload{}, score: score}
	for _, wl := range wls {
		k := core.LocalQueueKey(wl)
		if _, ok := t.byLQ[k]; !ok {
			t.lqs = append(t.lqs, k)
		}
		t.byLQ[k] = append(t.byLQ[k], wl)
	}
	sort.Strings(t.lqs)
	for _, k := range t.lqs {
		l := t.byLQ[k]
		sort.Slice(l, func(i, j int) bool { return Before(l[i], l[j]) })
	}
	return t
}

// Next is the LocalQueue whose turn it is, "" when none has workloads.
func (t *Turns) Next() string {
	best := ""
	var bestScore float64
	for _, k := range t.lqs {
		l := t.byLQ[k]
		if len(l) == 0 {
			continue
		}
		score := t.score(k)
		if best == "" || score < bestScore || (score == bestScore && Before(l[0], t.byLQ[best][0])) {
			best, bestScore = k, score
		}
	}
	return best
}

// Peek is the head of the LocalQueue whose turn it is.
func (t *Turns) Peek() *core.Workload {
	if k := t.Next(); k != "" {
		return t.byLQ[k][0]
	}
	return nil
}

// Pop removes the head of a LocalQueue.
func (t *Turns) Pop(localQueue string) {
	t.byLQ[localQueue] = t.byLQ[localQueue][1:]
}

// InTurns is the order as a ClusterQueue's cycles would try it under
// admission fair sharing: LocalQueues take turns by score, each workload
// taken raising its LocalQueue's (take) as if it were admitted. The
// visibility API's positions and the dashboard come from it, so they
// follow the turns rather than priority alone (an estimate either way:
// who fits when decides).
func (o PendingOrder) InTurns(score func(localQueue string) float64, take func(*core.Workload)) PendingOrder {
	turns := NewTurns(o.Workloads, score)
	out := make([]*core.Workload, 0, len(o.Workloads))
	for k := turns.Next(); k != ""; k = turns.Next() {
		wl := turns.byLQ[k][0]
		turns.Pop(k)
		out = append(out, wl)
		take(wl)
	}
	return PendingOrder{Workloads: out, inLocalQueue: localQueuePositions(out)}
}
