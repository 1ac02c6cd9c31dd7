package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// stream drives one 16-GPU queue through virtual time: 1-GPU workloads
// arrive at a constant mean rate above what the queue can run, each
// running at most maxRun (some declare that bound, some declare none); a
// 16-GPU workload arrives at bigAt. It returns when the big one was
// admitted (zero: not within the horizon).
type stream struct {
	r                *rand.Rand
	guard            time.Duration
	maxRun, step     time.Duration
	bigAt, horizon   time.Duration
	meanGap          time.Duration
	declaredFraction float64
}

func (st stream) run(tb testing.TB) time.Duration {
	tb.Helper()
	tr := NewTracker(Config{})
	tr.Cache.UpsertFlavor(&core.Flavor{Name: "a100"})
	cq := coretest.GPUQueue("cq", coretest.GPUs("a100", 16))
	cq.StarvationAfter = st.guard
	tr.UpsertClusterQueue(cq)
	tr.Queues.UpsertLocalQueue("ns", "lq", "cq")
	ends := map[string]time.Duration{} // admitted workload → when it finishes
	runtimes := map[string]time.Duration{}
	nextArrival, n := time.Duration(0), 0
	bigQueued := false
	for now := time.Duration(0); now < st.horizon; now += st.step {
		for key, end := range ends {
			if end <= now {
				delete(ends, key)
				tr.Forget(key)
			}
		}
		for nextArrival <= now {
			w := coretest.GPUWorkload(fmt.Sprintf("s%05d", n), 0, 0, 1, 1)
			w.Created = coretest.Epoch.Add(nextArrival)
			runtimes[w.Key] = time.Duration(1+st.r.Int64N(int64(st.maxRun/time.Minute))) * time.Minute
			if st.r.Float64() < st.declaredFraction {
				w.MaxRuntime = st.maxRun
			}
			tr.Apply(PhasePending, w)
			n++
			nextArrival += time.Duration(st.r.ExpFloat64() * float64(st.meanGap))
		}
		if !bigQueued && now >= st.bigAt {
			big := coretest.GPUWorkload("big", 0, 0, 16, 1)
			big.Created = coretest.Epoch.Add(st.bigAt)
			runtimes[big.Key] = time.Hour
			tr.Apply(PhasePending, big)
			bigQueued = true
		}
		for _, d := range runCycleAt(tr, coretest.Epoch.Add(now)) {
			if d.AdmitsPending() {
				if d.Workload.Name == "big" {
					return now
				}
				ends[d.Workload.Key] = now + runtimes[d.Workload.Key]
			}
		}
	}
	return 0
}

// runCycleAt is runCycle at a given time, admissions stamped with it.
func runCycleAt(tr *Tracker, now time.Time) []Decision {
	heads, seq := tr.Queues.Heads()
	s := tr.Snapshot()
	s.SetNow(now)
	ds := Schedule(s, heads)
	for i := range ds {
		d := &ds[i]
		switch {
		case d.Admission != nil:
			w := *d.Workload
			w.Admission, w.AdmittedAt = d.Admission, now
			tr.Apply(PhaseHolding, &w)
		case d.Park:
			tr.Queues.Park(d.Workload, seq)
		}
	}
	return ds
}

// TestReservedWorkloadAdmittedWithinABound (property): under a stationary
// stream of 1-GPU workloads that keeps a 16-GPU queue oversubscribed, a
// 16-GPU workload is admitted within guard + the longest runtime (+ one
// step) of its arrival: once room is held for it, nothing unbounded takes
// what frees, and what backfills ends before it could fit. Without the
// guard the same stream passes it for hours in most runs (checked, so the
// property is not vacuous).
func TestReservedWorkloadAdmittedWithinABound(t *testing.T) {
	starvedWithout := 0
	const runs = 40
	for seed := range uint64(runs) {
		st := stream{
			r: rand.New(rand.NewPCG(seed, 7)), guard: 30 * time.Minute, maxRun: 40 * time.Minute,
			step: 30 * time.Second, bigAt: 20 * time.Minute, horizon: 8 * time.Hour,
			meanGap: 70 * time.Second, declaredFraction: float64(seed%4) / 3,
		}
		bound := st.bigAt + st.guard + st.maxRun + 2*st.step
		at := st.run(t)
		if at == 0 || at > bound {
			t.Fatalf("seed %d (declared %.2f): big admitted at %s, bound %s", seed, st.declaredFraction, at, bound)
		}
		st.r, st.guard = rand.New(rand.NewPCG(seed, 7)), 0
		if without := st.run(t); without == 0 || without > bound {
			starvedWithout++
		}
	}
	t.Logf("without the guard: starved past the bound in %d of %d runs", starvedWithout, runs)
	if starvedWithout < runs/2 {
		t.Errorf("without the guard the big workload starved in only %d of %d runs: the stream is too light to test the guard", starvedWithout, runs)
	}
}
