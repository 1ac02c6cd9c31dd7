package queue

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// TestInTurnsTakesTurnsAsNext (property): the order InTurns builds with
// its heap is the one Turns.Next gives taking one turn at a time, with
// many LocalQueues, equal scores (the head decides), weight-0 queues
// (+Inf) and priorities.
func TestInTurnsTakesTurnsAsNext(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for i := range 300 {
		var wls []*core.Workload
		for j := range r.IntN(60) {
			wls = append(wls, inQueue(coretest.GPUWorkload(fmt.Sprintf("w%d", j), int32(r.IntN(3)), r.IntN(20), 1, int64(1+r.IntN(3))), fmt.Sprintf("lq%d", r.IntN(12))))
		}
		start := map[string]float64{}
		for k := range 12 {
			switch r.IntN(4) {
			case 0:
				start[fmt.Sprintf("ns/lq%d", k)] = math.Inf(1)
			default:
				start[fmt.Sprintf("ns/lq%d", k)] = float64(r.IntN(3))
			}
		}
		scoring := func() (func(string) float64, func(string, *core.Workload)) {
			s := map[string]float64{}
			for k, v := range start {
				s[k] = v
			}
			return func(k string) float64 { return s[k] }, func(k string, wl *core.Workload) { s[k] += float64(wl.PodSets[0].Requests["nvidia.com/gpu"]) }
		}
		score, take := scoring()
		var got []string
		for _, wl := range NewPendingOrder(wls).InTurns(score, take).Ordered() {
			got = append(got, wl.Name)
		}
		score, take = scoring()
		turns := NewTurns(wls, score)
		var want []string
		for k := turns.Next(); k != ""; k = turns.Next() {
			wl := turns.Peek()
			turns.Pop(k)
			take(k, wl)
			want = append(want, wl.Name)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: InTurns %v, Next %v", i, got, want)
		}
	}
}
