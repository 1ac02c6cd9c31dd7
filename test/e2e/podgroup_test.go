//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

// podGroup is n plain Pods of 1 GPU in one pod group, labelled job-name
// for podsOf; kueue spells the group with Kueue's keys.
func podGroup(ns, name string, n int, kueue bool) []client.Object {
	var out []client.Object
	for i := range n {
		b := MakePod(fmt.Sprintf("%s-%d", name, i), ns).Label("job-name", name).
			Request(gpu, "1").Request("cpu", "1").Annotation("muster.dev/runtime", "5s")
		if kueue {
			b.Label(musterv1beta1.KueueQueueNameLabel, "main").Label("kueue.x-k8s.io/pod-group-name", name).
				Annotation("kueue.x-k8s.io/pod-group-total-count", fmt.Sprint(n))
		} else {
			b.Queue("main").Group(name, n)
		}
		out = append(out, b.Obj())
	}
	return out
}

// TestPodGroupsRunWholeOneAfterTheOther: the seeds' deadlock with plain
// Pods: two groups of 16 one-GPU Pods on 24 GPUs, the second in Kueue's
// spelling. Each group is one Workload admitted whole: sampled every
// 100 ms, Pods of both are never bound at once, and both finish.
func TestPodGroupsRunWholeOneAfterTheOther(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	queues(t, ns, "16", "8")
	createAll(t, podGroup(ns, "a", 16, false)...)
	createAll(t, podGroup(ns, "b", 16, true)...)

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
	g.Eventually(func(g Gomega) {
		for _, group := range []string{"a", "b"} {
			var wl musterv1beta1.Workload
			g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: group}, &wl)).To(Succeed())
			g.Expect(workload.IsFinished(&wl)).To(BeTrue(), "group %s finished", group)
			_, _, done, _ := podsOf(g, ns, group)
			g.Expect(done).To(Equal(16))
		}
	}, timeout, time.Second).Should(Succeed())
	close(stop)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d samples, %d with Pods of both groups bound", samples, overlaps)
	g.Expect(samples).To(BeNumerically(">", 20))
	g.Expect(overlaps).To(BeZero())
}

// TestPodGroupInOneRack: a group of 16 two-GPU Pods, each annotated with
// Kueue's podset-required-topology rack, is placed in one rack (32 GPUs)
// and each Pod runs on the node its Workload's topology assignment names.
func TestPodGroupInOneRack(t *testing.T) {
	g := NewWithT(t)
	p := topologyPool(t)
	ns := namespace(t)
	topologyQueue(t, ns, "128", nil)
	var pods []client.Object
	for i := range 16 {
		pods = append(pods, MakePod(fmt.Sprintf("r-%d", i), ns).Label("job-name", "racked").Queue("main").Group("racked", 16).
			Request(gpu, "2").Request("cpu", "1").Annotation("kueue.x-k8s.io/podset-required-topology", rackLabel).Obj())
	}
	createAll(t, pods...)
	g.Eventually(func(g Gomega) {
		var wl musterv1beta1.Workload
		g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "racked"}, &wl)).To(Succeed())
		nodes := placedAs(g, &wl, map[string]string{"job-name": "racked"}, 16)
		g.Expect(p.racksOf(nodes)).To(HaveLen(1), "pods on %v", nodes)
	}, timeout, time.Second).Should(Succeed())
}
