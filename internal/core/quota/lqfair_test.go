package quota

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/musterhq/muster/internal/core"
)

// TestTakeSumsAsWeightedScore: Take, which sums without a map, adds
// exactly what weightedScore gives for the same requests (ties between
// LocalQueues must not move), over pod sets repeating resources in any
// order, decay weights and weight 0.
func TestTakeSumsAsWeightedScore(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	resources := []string{"cpu", "memory", "nvidia.com/gpu", "example.com/nic"}
	cfg := DecayConfig{Weights: map[string]float64{"nvidia.com/gpu": 4, "memory": 1e-9}}
	for i := range 500 {
		wl := &core.Workload{Namespace: "ns", Queue: "lq"}
		want := map[core.FlavorResource]float64{}
		scale := 0.3 + r.Float64()
		for range 1 + r.IntN(3) {
			ps := core.PodSet{Count: int32(1 + r.IntN(16)), Requests: core.Requests{}}
			for _, res := range resources {
				if r.IntN(2) == 0 {
					ps.Requests[res] = int64(1 + r.IntN(64000))
				}
			}
			for res, v := range ps.Requests {
				want[core.FlavorResource{Resource: res}] += float64(v) * float64(ps.Count) * scale
			}
			wl.PodSets = append(wl.PodSets, ps)
		}
		weight := int64(r.IntN(3) * 500)
		s := &LocalQueueScores{scores: map[string]float64{"ns/lq": 1.5}, weights: map[string]int64{"ns/lq": weight}, cfg: cfg, scale: scale}
		s.Take("ns/lq", wl)
		if w := 1.5 + weightedScore(want, weight, cfg); s.Score("ns/lq") != w && !(math.IsInf(w, 1) && math.IsInf(s.Score("ns/lq"), 1)) {
			t.Fatalf("case %d: Take gives %v, weightedScore %v", i, s.Score("ns/lq"), w)
		}
	}
}
