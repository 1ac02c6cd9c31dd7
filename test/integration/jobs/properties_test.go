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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/test/framework"
)

// TestQuotaIsNeverOversubscribed (P1): 30 Jobs of random sizes created at
// once; a sampler reads the admitted workloads every 10 ms and the admitted
// GPUs never exceed the quota; a fake kubelet finishes running jobs, and
// eventually every job ran.
func TestQuotaIsNeverOversubscribed(t *testing.T) {
	const quota, jobs = 12, 30
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env.StartManager(t)
	q := setupQueues(t, fmt.Sprint(quota))

	rng := rand.New(rand.NewPCG(1, 2))
	var all []*batchv1.Job
	for i := range jobs {
		all = append(all, q.gpuJob(fmt.Sprintf("p1-%02d", i), int32(1+rng.IntN(3)), fmt.Sprint(1+rng.IntN(4))))
	}
	sampler := quotaSampler(q, quota)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); sampler.Run(ctx) }()
	go func() { defer wg.Done(); finishRunningJobs(ctx, q.ns, 150*time.Millisecond) }()

	var created sync.WaitGroup
	for _, j := range all {
		created.Add(1)
		go func() { defer created.Done(); g.Expect(env.Client.Create(ctx, j)).To(Succeed()) }()
	}
	created.Wait()

	g.Eventually(func(g Gomega) int { return finishedCount(g, q.ns) }, 60*time.Second, 100*time.Millisecond).
		Should(Equal(jobs), "every job eventually runs and finishes")
	cancel()
	wg.Wait()
	sampler.Check(t, 10)
}

// quotaSampler checks every 10 ms that the test queue's admitted,
// unfinished workloads hold no more GPUs than its quota.
func quotaSampler(q testQueues, quota int64) *framework.QuotaSampler {
	return &framework.QuotaSampler{Client: env.Client, Namespace: q.ns, Resource: gpu,
		PerQueue: map[string]int64{q.cq: quota}, Interval: 10 * time.Millisecond}
}

// finishRunningJobs plays the Job controller: a job unsuspended for longer
// than runtime is marked Complete.
func finishRunningJobs(ctx context.Context, ns string, runtime time.Duration) {
	started := map[string]time.Time{}
	for ctx.Err() == nil {
		var list batchv1.JobList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err == nil {
			for i := range list.Items {
				j := &list.Items[i]
				if isSuspended(j) || isFinished(j) {
					continue
				}
				if _, ok := started[j.Name]; !ok {
					started[j.Name] = time.Now()
				}
				if time.Since(started[j.Name]) > runtime {
					_ = markComplete(ctx, j)
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
			return true
		}
	}
	return false
}
