package jobs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// TestConflictingWritersLoseNothing (P10): while 20 Jobs are admitted and
// finished, other writers keep updating the same Jobs and Workloads. No
// admission is lost, no quota is counted twice (sampled), and no conflict
// reaches an error-level log line.
func TestConflictingWritersLoseNothing(t *testing.T) {
	const quota, jobs = 8, 20
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env.StartManager(t)
	q := setupQueues(t, fmt.Sprint(quota))
	conflictsBefore := framework.ConflictErrors()

	var wg sync.WaitGroup
	sampler := quotaSampler(q, quota)
	wg.Add(4)
	go func() { defer wg.Done(); sampler.Run(ctx) }()
	go func() { defer wg.Done(); finishRunningJobs(ctx, q.ns, 300*time.Millisecond) }()
	go func() { defer wg.Done(); scribble(ctx, q.ns, &musterv1beta1.WorkloadList{}) }()
	go func() { defer wg.Done(); scribble(ctx, q.ns, &batchv1.JobList{}) }()

	rng := rand.New(rand.NewPCG(7, 11))
	for i := range jobs {
		g.Expect(env.Client.Create(ctx, q.gpuJob(fmt.Sprintf("p10-%02d", i), 1, fmt.Sprint(1+rng.IntN(4))))).To(Succeed())
	}
	g.Eventually(func(g Gomega) int { return finishedCount(g, q.ns) }, 90*time.Second, 200*time.Millisecond).Should(Equal(jobs), "no admission lost")
	cancel()
	wg.Wait()
	sampler.Check(t, 1)
	g.Expect(framework.ConflictErrors()-conflictsBefore).To(BeZero(), "conflicts are retried quietly, not logged as errors")
}

// scribble keeps touching an annotation on every object of a list, as other
// controllers and users do, until ctx ends.
func scribble(ctx context.Context, ns string, list client.ObjectList) {
	for n := 0; ctx.Err() == nil; n++ {
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err == nil {
			_ = meta.EachListItem(list, func(o runtime.Object) error {
				obj := o.(client.Object)
				a := obj.GetAnnotations()
				if a == nil {
					a = map[string]string{}
				}
				a["test.muster.dev/scribble"] = fmt.Sprint(n)
				obj.SetAnnotations(a)
				_ = env.Client.Update(ctx, obj) // conflicts expected
				return nil
			})
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// TestWebhookFailsClosedOutsideSystemNamespaces (P6): with no Muster
// replica answering, a job naming a queue cannot be created in a managed
// namespace (it would run ungated); kube-system is not affected.
func TestWebhookFailsClosedOutsideSystemNamespaces(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t, "failclosed", nil)
	err := env.Client.Create(ctx, MakeJob("ungated", ns).Queue("main").Obj())
	g.Expect(err).To(MatchError(ContainSubstring("failed calling webhook")))

	system := MakeJob("system-"+ns, "kube-system").Queue("main").Obj()
	g.Expect(env.Client.Create(ctx, system)).To(Succeed(), "kube-system is excluded by the namespaceSelector")
	t.Cleanup(func() { _ = env.Client.Delete(ctx, system) })
}

// TestFlavorAndQueuesInAnyOrder (P8): whatever order the flavor, the
// ClusterQueue, the LocalQueue and the Job arrive in, the ClusterQueue is
// inactive while its flavor is missing and the Job ends up admitted.
func TestFlavorAndQueuesInAnyOrder(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	type step func(ns string) client.Object
	steps := map[string]step{
		"flavor": func(ns string) client.Object {
			return MakeResourceFlavor("f-"+ns).NodeLabel("gpu", "a100").QuotaOnly().Obj()
		},
		"cq": func(ns string) client.Object {
			return MakeClusterQueue("cq-" + ns).ResourceGroup(MakeFlavorQuotas("f-"+ns).Resource(gpu, "4").Obj()).Obj()
		},
		"lq":  func(ns string) client.Object { return MakeLocalQueue("main", ns).ClusterQueue("cq-" + ns).Obj() },
		"job": func(ns string) client.Object { return MakeJob("j", ns).Queue("main").Request(gpu, "2").Obj() },
	}
	var jobs []*batchv1.Job
	for _, order := range permutations([]string{"flavor", "cq", "lq", "job"}) {
		ns := env.NewNamespace(t, "order", nil)
		for _, name := range order {
			obj := steps[name](ns)
			g.Expect(env.Client.Create(ctx, obj)).To(Succeed(), "%v", order)
			t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
			if j, ok := obj.(*batchv1.Job); ok {
				jobs = append(jobs, j)
			}
			time.Sleep(20 * time.Millisecond) // let each arrival be seen on its own
		}
	}
	for _, j := range jobs {
		expectRunning(t, j)
	}
}

func permutations(xs []string) [][]string {
	if len(xs) <= 1 {
		return [][]string{append([]string(nil), xs...)}
	}
	var out [][]string
	for i := range xs {
		rest := append(append([]string(nil), xs[:i]...), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{xs[i]}, p...))
		}
	}
	return out
}

// TestRestartWithBacklogNeverOverAdmits (P3): a manager restarted with
// admitted work and a backlog rebuilds its cache before admitting: sampled
// every 10 ms through the restart and what follows, usage never exceeds
// quota, and the backlog drains.
func TestRestartWithBacklogNeverOverAdmits(t *testing.T) {
	const quota, jobs = 8, 8
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr := env.StartManager(t)
	q := setupQueues(t, fmt.Sprint(quota))
	sampler := quotaSampler(q, quota)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); sampler.Run(ctx) }()
	for i := range jobs {
		g.Expect(env.Client.Create(ctx, q.gpuJob(fmt.Sprintf("p3-%d", i), 1, "4"))).To(Succeed())
	}
	g.Eventually(func(g Gomega) int { return admittedCount(g, q.ns) }, framework.Timeout, framework.Interval).Should(Equal(2))

	mgr.Stop(t)
	env.Restart(t, mgr)
	wg.Add(1)
	go func() { defer wg.Done(); finishRunningJobs(ctx, q.ns, 200*time.Millisecond) }()
	g.Eventually(func(g Gomega) int { return finishedCount(g, q.ns) }, 60*time.Second, 200*time.Millisecond).Should(Equal(jobs))
	cancel()
	wg.Wait()
	sampler.Check(t, 1)
}

func admittedCount(g Gomega, ns string) int {
	var wls musterv1beta1.WorkloadList
	g.Expect(env.Client.List(context.Background(), &wls, client.InNamespace(ns))).To(Succeed())
	n := 0
	for _, wl := range wls.Items {
		if workload.HoldsQuota(&wl) {
			n++
		}
	}
	return n
}

// TestQuotaNeverOversubscribedInACohort (P1 with cohorts and borrowing):
// two queues of 6 GPUs in a cohort, one allowed to borrow 4; 30 Jobs of
// random sizes on both, created at once. Sampled every 10 ms: the cohort
// never holds more than 12 GPUs, the borrower never more than 10, the
// other never more than 12; everything eventually runs.
func TestQuotaNeverOversubscribedInACohort(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env.StartManager(t)
	ns := env.NewNamespace(t, "p1-cohort", nil)
	flavor := "f-" + ns
	mk := func(name, borrowing string) *musterv1beta1.ClusterQueue {
		return MakeClusterQueue(name + "-" + ns).Cohort("c-" + ns).
			ResourceGroup(MakeFlavorQuotas(flavor).Resource(gpu, "6", borrowing).Obj()).Obj()
	}
	env.CreateAll(t, MakeResourceFlavor(flavor).NodeLabel("gpu", "a100").QuotaOnly().Obj(), mk("a", "4"), mk("b", ""),
		MakeLocalQueue("a", ns).ClusterQueue("a-"+ns).Obj(), MakeLocalQueue("b", ns).ClusterQueue("b-"+ns).Obj())

	sampler := &framework.QuotaSampler{Client: env.Client, Namespace: ns, Resource: gpu,
		PerQueue: map[string]int64{"a-" + ns: 10, "b-" + ns: 12}, Total: 12, Interval: 10 * time.Millisecond}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); sampler.Run(ctx) }()
	go func() { defer wg.Done(); finishRunningJobs(ctx, ns, 150*time.Millisecond) }()
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 30 {
		queue := []string{"a", "b"}[rng.IntN(2)]
		j := MakeJob(fmt.Sprintf("p1-%02d", i), ns).Queue(queue).Parallelism(int32(1+rng.IntN(2))).Request(gpu, fmt.Sprint(1+rng.IntN(3))).Obj()
		g.Expect(env.Client.Create(ctx, j)).To(Succeed())
	}
	g.Eventually(func(g Gomega) int { return finishedCount(g, ns) }, 90*time.Second, 200*time.Millisecond).Should(Equal(30))
	cancel()
	wg.Wait()
	sampler.Check(t, 1)
}

// finishedCount is how many workloads of a namespace finished.
func finishedCount(g Gomega, ns string) int {
	var wls musterv1beta1.WorkloadList
	g.Expect(env.Client.List(context.Background(), &wls, client.InNamespace(ns))).To(Succeed())
	n := 0
	for _, wl := range wls.Items {
		if meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadFinished) {
			n++
		}
	}
	return n
}
