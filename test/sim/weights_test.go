package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
)

// TestDecayedSharesConvergeToWeights (property): two queues borrow all of
// a 16-GPU pool with fair-sharing weights drawn at random, both with more
// 1-GPU work than the pool holds for the whole run. Whatever the weights,
// the half-life and the runtimes, their GPU-hours after the first hours
// split as their weights do (within three quarters of a GPU of 16: the
// worst of these cases is 0.4 off) with decayed usage too: decay changes who is served
// first after a change, not where it settles.
func TestDecayedSharesConvergeToWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 12 {
		wa, wb := int64(1+r.IntN(4)), int64(1+r.IntN(4))
		halfLife := time.Duration(30+r.IntN(150)) * time.Minute
		runtime := time.Duration(10+r.IntN(30)) * time.Minute
		t.Run(fmt.Sprintf("%d:weights %d:%d half-life %s runtime %s", i, wa, wb, halfLife, runtime), func(t *testing.T) {
			a, b := gpuQueue("a", 0), gpuQueue("b", 0)
			a.Cohort, b.Cohort = "pool", "pool"
			a.Weight, b.Weight = wa*1000, wb*1000
			setup := Setup{Queues: []*core.ClusterQueue{a, b}, FairSharing: true,
				Cohorts: []*core.Cohort{{Name: "pool", Weight: 1000, ResourceGroups: gpuGroups(16)}},
				Decay:   quota.DecayConfig{HalfLife: halfLife}, DecaySampling: 5 * time.Minute}
			const horizon = 12 * time.Hour
			var jobs []Job
			for k := 0; k < int(16*horizon/runtime)+16; k++ {
				for _, q := range []string{"a", "b"} {
					jobs = append(jobs, Job{Queue: q, GPUs: 1, Runtime: runtime})
				}
			}
			res, err := Run("weights", setup, jobs, DefaultOptions(horizon))
			if err != nil {
				t.Fatal(err)
			}
			from := 4 * time.Hour
			ga, gb := res.GPUHours("a", from, horizon), res.GPUHours("b", from, horizon)
			hours := (horizon - from).Hours()
			want := 16 * float64(wa) / float64(wa+wb)
			if got := ga / hours; math.Abs(got-want) > 0.75 {
				t.Errorf("a held %.2f GPUs on average (b %.2f), want %.2f for weights %d:%d", got, gb/hours, want, wa, wb)
			}
		})
	}
}
