//go:build e2e

package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/musterhq/muster/test/framework"
)

// TestDeadlockWithoutMuster documents the problem: two 16-pod Jobs on 24
// GPUs, not managed by Muster, both get pods bound and neither can finish
// its set: the rest stay Pending for good.
func TestDeadlockWithoutMuster(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	a, b := gpuJob(ns, "a", "", 16, ""), gpuJob(ns, "b", "", 16, "")
	createAll(t, a, b)
	g.Eventually(func(g Gomega) {
		boundA, pendingA, _, _ := podsOf(g, ns, "a")
		boundB, pendingB, _, _ := podsOf(g, ns, "b")
		g.Expect(boundA+boundB).To(Equal(24), "every GPU is taken")
		g.Expect(boundA).To(BeNumerically(">", 0))
		g.Expect(boundB).To(BeNumerically(">", 0))
		g.Expect(pendingA + pendingB).To(Equal(8))
		t.Logf("without Muster: job a %d bound/%d pending, job b %d bound/%d pending", boundA, pendingA, boundB, pendingB)
	}, timeout, time.Second).Should(Succeed())
}

// TestJobsRunWholeOneAfterTheOther: the same two Jobs through Muster run one
// after the other; sampled every 100 ms, pods of both are never bound at
// once; both succeed.
func TestJobsRunWholeOneAfterTheOther(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	cq := queues(t, ns, "16", "8")
	a, b := gpuJob(ns, "a", "main", 16, "5s"), gpuJob(ns, "b", "main", 16, "5s")
	createAll(t, a, b)
	// The same check as the envtest suites': admissions never hold more
	// GPUs than the queue's 16 + 8.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sampler := &framework.QuotaSampler{Client: c, Namespace: ns, Resource: gpu, PerQueue: map[string]int64{cq: 24},
		Interval: 100 * time.Millisecond}
	go sampler.Run(ctx)

	stop := make(chan struct{})
	var mu sync.Mutex
	var overlaps, samples int
	go sampleEvery(100*time.Millisecond, stop, func() {
		sg := NewGomega(func(string, ...int) {})
		boundA, _, _, _ := podsOf(sg, ns, "a")
		boundB, _, _, _ := podsOf(sg, ns, "b")
		mu.Lock()
		defer mu.Unlock()
		samples++
		if boundA > 0 && boundB > 0 {
			overlaps++
		}
	})
	g.Eventually(func(g Gomega) bool { return jobSucceeded(g, ns, "a") && jobSucceeded(g, ns, "b") }, timeout, time.Second).Should(BeTrue())
	close(stop)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d samples, %d with pods of both jobs bound", samples, overlaps)
	g.Expect(samples).To(BeNumerically(">", 20))
	g.Expect(overlaps).To(BeZero())
	cancel()
	sampler.Check(t, 20)
}

// TestFlavorPlacement: admitted pods land only on nodes of their flavor.
func TestFlavorPlacement(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	queues(t, ns, "0", "8") // only h100 quota
	j := gpuJob(ns, "h100-only", "main", 6, "")
	createAll(t, j)
	g.Eventually(func(g Gomega) {
		bound, _, _, nodes := podsOf(g, ns, j.Name)
		g.Expect(bound).To(Equal(6))
		for _, n := range nodes {
			g.Expect(nodeLabel(g, n, "muster.dev/gpu")).To(Equal("h100"), "pod on node %s", n)
		}
	}, timeout, time.Second).Should(Succeed())
}
