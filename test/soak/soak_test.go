//go:build soak

// Package soak is Muster's randomized soak (`make soak`, not in CI):
// thousands of Jobs of random sizes and priorities on three ClusterQueues
// sharing a cohort (borrowing, reclaim and priority preemption on), a fake
// kubelet finishing them, the manager restarted every few seconds, and
// other writers causing conflicts. At the end every Job has finished or is
// pending with a reason, and no sample ever exceeded quota.
//
//	SOAK_JOBS=2000 SOAK_RESTART_EVERY=20s make soak
package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{Webhooks: true}, &env, false) }

const gpu = corev1.ResourceName("nvidia.com/gpu")

func knob(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func TestSoak(t *testing.T) {
	jobs := knob("SOAK_JOBS", 2000)
	restartEvery, _ := time.ParseDuration(os.Getenv("SOAK_RESTART_EVERY"))
	if restartEvery == 0 {
		restartEvery = 20 * time.Second
	}
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr := env.StartManager(t) // serves the webhooks the setup goes through
	ns := env.NewNamespace(t, "soak", nil)
	flavor := "f-" + ns
	limits := map[string]int64{}
	var objs []client.Object
	for i, q := range []struct {
		borrow string
		pre    *musterv1beta1.ClusterQueuePreemption
	}{
		{"4", &musterv1beta1.ClusterQueuePreemption{WithinClusterQueue: musterv1beta1.PreemptionPolicyLowerPriority}},
		{"", &musterv1beta1.ClusterQueuePreemption{ReclaimWithinCohort: musterv1beta1.PreemptionPolicyAny}},
		{"", nil},
	} {
		name := fmt.Sprintf("q%d-%s", i, ns)
		cq := MakeClusterQueue(name).Cohort("c-" + ns).ResourceGroup(MakeFlavorQuotas(flavor).Resource(gpu, "8", q.borrow).Obj()).Obj()
		cq.Spec.Preemption = q.pre
		limits[name] = 24 // without a borrowing limit: the whole cohort
		if q.borrow != "" {
			limits[name] = 12
		}
		objs = append(objs, cq, MakeLocalQueue(fmt.Sprintf("q%d", i), ns).ClusterQueue(name).Obj())
	}
	objs = append(objs, MakeResourceFlavor(flavor).QuotaOnly().Obj(), MakeWorkloadPriorityClass("high-"+ns, 100))
	env.CreateAll(t, objs...)

	var restarts atomic.Int64
	sampler := &framework.QuotaSampler{Client: env.Client, Namespace: ns, Resource: gpu, PerQueue: limits, Total: 24,
		Interval: 50 * time.Millisecond}
	var wg sync.WaitGroup
	run := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	run(func() { // the manager restarts every restartEvery
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(restartEvery):
				mgr = env.Restart(t, mgr)
				restarts.Add(1)
			}
		}
	})
	run(func() { sampler.Run(ctx) })
	run(func() { kubelet(ctx, ns) })
	run(func() { scribble(ctx, ns) })

	start := time.Now()
	rng := rand.New(rand.NewPCG(uint64(jobs), 42))
	for i := range jobs {
		b := MakeJob(fmt.Sprintf("j%05d", i), ns).Queue(fmt.Sprintf("q%d", rng.IntN(3))).
			Parallelism(int32(1+rng.IntN(3))).Request(gpu, fmt.Sprint(1+rng.IntN(3)))
		if rng.IntN(5) == 0 {
			b.Label(musterv1beta1.WorkloadPriorityClassLabel, "high-"+ns)
		}
		job := b.Obj()
		// The webhook fails closed while the manager restarts: retry.
		g.Eventually(func() error { return client.IgnoreAlreadyExists(env.Client.Create(ctx, job.DeepCopy())) },
			30*time.Second, 100*time.Millisecond).Should(Succeed())
		if i%50 == 49 {
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Progress is logged every 10 s; the deadline allows 0.5 s a job.
	deadline := time.Now().Add(max(time.Duration(jobs)*500*time.Millisecond, 2*time.Minute))
	var finished, pendingWithReason, other int
	for {
		finished, pendingWithReason, other = tally(g, ns)
		if finished == jobs || time.Now().After(deadline) {
			break
		}
		t.Logf("%s: %d finished, %d pending with a reason, %d other, %d restarts", time.Since(start).Round(time.Second),
			finished, pendingWithReason, other, restarts.Load())
		time.Sleep(10 * time.Second)
	}
	cancel()
	wg.Wait()
	samples, violations, _ := sampler.Result()
	t.Logf("soak: %d jobs in %s, %d finished, %d pending with a reason, %d other; %d manager restarts; %d samples, %d above quota; %d error-level conflict logs",
		jobs, time.Since(start).Round(time.Second), finished, pendingWithReason, other, restarts.Load(), samples, violations, framework.ConflictErrors())
	sampler.Check(t, 1)
	g.Expect(other).To(BeZero())
	g.Expect(finished).To(Equal(jobs))
}

// tally counts finished workloads, pending ones with a QuotaReserved=False
// reason, and anything else.
func tally(g Gomega, ns string) (finished, pending, other int) {
	var wls musterv1beta1.WorkloadList
	g.Expect(env.Client.List(context.Background(), &wls, client.InNamespace(ns))).To(Succeed())
	for _, wl := range wls.Items {
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)
		switch {
		case meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadFinished):
			finished++
		case wl.Status.Admission != nil:
		case c != nil && c.Message != "":
			pending++
		default:
			other++
		}
	}
	return
}

// kubelet completes Jobs that have run for a random 100-500 ms.
func kubelet(ctx context.Context, ns string) {
	started := map[string]time.Time{}
	runtime := map[string]time.Duration{}
	for ctx.Err() == nil {
		var list batchv1.JobList
		if env.Client.List(ctx, &list, client.InNamespace(ns)) == nil {
			for i := range list.Items {
				j := &list.Items[i]
				if framework.IsSuspended(j) {
					delete(started, j.Name)
					continue
				}
				if _, ok := started[j.Name]; !ok {
					started[j.Name] = time.Now()
					runtime[j.Name] = time.Duration(100+rand.IntN(400)) * time.Millisecond
				}
				if time.Since(started[j.Name]) > runtime[j.Name] && j.Status.CompletionTime == nil {
					_ = env.MarkJobComplete(ctx, j)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// scribble keeps updating workloads' annotations, causing conflicts.
func scribble(ctx context.Context, ns string) {
	for n := 0; ctx.Err() == nil; n++ {
		var wls musterv1beta1.WorkloadList
		if env.Client.List(ctx, &wls, client.InNamespace(ns)) == nil && len(wls.Items) > 0 {
			wl := &wls.Items[rand.IntN(len(wls.Items))]
			if wl.Annotations == nil {
				wl.Annotations = map[string]string{}
			}
			wl.Annotations["soak.muster.dev/touch"] = fmt.Sprint(n)
			_ = env.Client.Update(ctx, wl)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
