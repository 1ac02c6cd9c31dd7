package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
	"github.com/musterhq/muster/internal/core/quota"
)

// TestVictimsExistWhenOnlyProtectedOnesFitFirst: when the preemptor fits
// without borrowing only by taking a protected victim, the plan waits for
// it (and never tries borrowing); the question a waiting preemptor asks
// gets the same answer, no victims, though borrowing would let unprotected
// ones do.
func TestVictimsExistWhenOnlyProtectedOnesFitFirst(t *testing.T) {
	cq := inCohort(coretest.GPUQueue("cq", coretest.GPUs("a100", 10)), "c")
	cq.Preemption = core.Preemption{WithinClusterQueue: core.PreemptLowerPriority, BorrowWithinCohort: core.PreemptLowerPriority, MinRuntime: time.Hour}
	lender := inCohort(coretest.GPUQueue("lender", coretest.GPUs("a100", 2)), "c")
	c := cacheWith([]*core.ClusterQueue{cq, lender}, "a100")
	now := coretest.Epoch.Add(24 * time.Hour)
	add := func(name string, prio int32, gpus int64, admitted time.Time) {
		w := coretest.Admitted(coretest.GPUWorkload(name, prio, 0, 1, gpus), "cq", "a100")
		w.AdmittedAt = admitted
		c.AddOrUpdateWorkload(w)
	}
	add("protected", 0, 6, now.Add(-time.Minute))
	add("unprotected", 0, 2, now.Add(-2*time.Hour))
	add("higher", 20, 2, now.Add(-2*time.Hour))
	s := c.Snapshot()
	s.SetNow(now)
	wl := coretest.GPUWorkload("preemptor", 10, 1, 1, 4)
	q := s.Queue("cq")
	adm, mode, _ := Assign(s, q, wl)
	if mode != FitPreempt {
		t.Fatalf("mode %v, want FitPreempt", mode)
	}
	plan := planPreemption(s, q, wl, adm)
	if len(plan.victims) != 0 || len(plan.protected) == 0 {
		t.Fatalf("plan %+v: want a protected one to wait for", plan)
	}
	if victimsExist(s, q, wl, adm) {
		t.Error("victims exist, the plan waits for a protected one")
	}
}

// TestVictimsExistAgreesWithThePlanOnQuota: the same question against
// the full plan on random cohorts of queues that lend, borrow, protect
// their workloads for a minimum runtime and have some already evicting.
func TestVictimsExistAgreesWithThePlanOnQuota(t *testing.T) {
	var a agreement
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, seed*7+1))
		c, now := randomCohort(rng)
		s := c.Snapshot()
		s.SetNow(now)
		for i := range 6 {
			name := fmt.Sprintf("q%d", rng.IntN(3))
			wl := coretest.GPUWorkload(fmt.Sprintf("p%d", i), int32(rng.IntN(4)), 100+i, 1, int64(rng.IntN(8)+1))
			a.check(t, s, s.Queue(name), wl, fmt.Sprintf("seed %d, %s", seed, name))
		}
	}
	a.exercised(t, 200)
}

// agreement compares victimsExist with the full plan for preemptors, and
// counts them and those with victims.
type agreement struct{ asked, yes int }

func (a *agreement) check(t *testing.T, s *Snapshot, q *quota.QueueSnapshot, wl *core.Workload, where string) {
	t.Helper()
	adm, mode, _ := Assign(s, q, wl)
	if mode != FitPreempt {
		return
	}
	a.asked++
	got, want := victimsExist(s, q, wl, adm), len(planPreemption(s, q, wl, adm).victims) > 0
	if got != want {
		t.Fatalf("%s, %s: victims exist %v, the plan says %v", where, wl.Name, got, want)
	}
	if got {
		a.yes++
	}
}

// exercised fails unless at least least preemptors were asked and both
// answers came up.
func (a agreement) exercised(t *testing.T, least int) {
	t.Helper()
	if a.asked < least || a.yes == 0 || a.yes == a.asked {
		t.Fatalf("%d preemptors asked, %d with victims: the worlds do not exercise both answers", a.asked, a.yes)
	}
	t.Logf("%d preemptors asked, %d with victims", a.asked, a.yes)
}

// randomCohort is three queues in one cohort with random quotas, limits,
// preemption policies and minimum runtimes, holding random workloads, some
// evicting; and the time of the cycle.
func randomCohort(rng *rand.Rand) (*testCache, time.Time) {
	policies := []core.PreemptionPolicy{core.PreemptNever, core.PreemptLowerPriority, core.PreemptAny}
	var cqs []*core.ClusterQueue
	for i := range 3 {
		fq := coretest.GPUs("a100", int64(rng.IntN(8)))
		if rng.IntN(2) == 0 {
			limit := int64(rng.IntN(4))
			rq := fq.Resources[coretest.GPU]
			rq.LendingLimit = &limit
			fq.Resources[coretest.GPU] = rq
		}
		cq := inCohort(coretest.GPUQueue(fmt.Sprintf("q%d", i), fq), "c")
		cq.Preemption = core.Preemption{WithinClusterQueue: policies[rng.IntN(2)], ReclaimWithinCohort: policies[rng.IntN(3)],
			BorrowWithinCohort: policies[rng.IntN(2)], MinRuntime: time.Duration(rng.IntN(3)) * time.Minute}
		cqs = append(cqs, cq)
	}
	c := cacheWith(cqs, "a100")
	now := coretest.Epoch.Add(time.Hour)
	for i := range rng.IntN(10) + 2 {
		w := coretest.Admitted(coretest.GPUWorkload(fmt.Sprintf("a%d", i), int32(rng.IntN(4)), i, 1, int64(rng.IntN(4)+1)), fmt.Sprintf("q%d", rng.IntN(3)), "a100")
		w.AdmittedAt = now.Add(-time.Duration(rng.IntN(180)) * time.Second)
		w.Evicting = rng.IntN(6) == 0
		c.AddOrUpdateWorkload(w)
	}
	return c, now
}
