//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/gang"
	. "github.com/musterhq/muster/test/builder"
)

// The gang e2e tests give Muster more quota than the nodes have: 32 GPUs
// on the 24 of the three demo nodes, so both 16-pod jobs are admitted and
// only the gang scheduler stands between them and a 12 + 12 deadlock. It
// binds one whole and leaves the other entirely Pending until the first
// finishes. The cluster must serve the gang scheduler (make test-e2e
// starts it with WORKLOAD_API=1 COSCHEDULING=1).

// gangQueues is a ClusterQueue of 32 GPUs on one flavor over the demo
// nodes (no node labels: any of them), handing its jobs to provider. The
// flavor admits on quota alone (node fit None, as for a pool whose nodes
// the gang scheduler alone may hold to): with node fit, Muster would
// admit the second job only once the first had left room, and the gang
// scheduler would have nothing to do.
func gangQueues(t *testing.T, ns string, provider musterv1beta1.GangSchedulerProvider) {
	t.Helper()
	requireServed(t, provider)
	flavor := "any-" + ns
	cq := MakeClusterQueue("cq-"+ns).GangScheduling(provider, "").
		ResourceGroup(MakeFlavorQuotas(flavor).Resource("cpu", "64").Resource(gpu, "32").Obj()).Obj()
	createAll(t, MakeResourceFlavor(flavor).QuotaOnly().Obj(), cq, MakeLocalQueue("main", ns).ClusterQueue(cq.Name).Obj())
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		var got musterv1beta1.ClusterQueue
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(cq), &got)).To(Succeed())
		g.Expect(got.Status.Conditions).To(ContainElement(And(HaveField("Type", musterv1beta1.ClusterQueueActive), HaveField("Status", metav1.ConditionTrue))))
	}, timeout, time.Second).Should(Succeed(), "the ClusterQueue is active: its gang scheduler is served")
}

// requireServed fails at once, with what to do, on a cluster started
// without the gang scheduler.
func requireServed(t *testing.T, p musterv1beta1.GangSchedulerProvider) {
	t.Helper()
	dc := discovery.NewDiscoveryClientForConfigOrDie(restConfig)
	api := gang.APIs[p]
	if _, err := dc.ServerResourcesForGroupVersion(api.GroupVersion); err != nil {
		t.Fatalf("the local cluster does not serve %s (%v): it was started without WORKLOAD_API=1 COSCHEDULING=1; run `make cluster-down test-e2e`", api.GroupVersion, err)
	}
}

// partialSampler samples, every 100 ms, how many pods of each group are
// bound, and counts the samples that show a partial allocation: two
// groups with pods bound at once while neither has yet been bound whole.
// Once a group was whole, its pods finish one by one and the next group
// may be bound beside the last of them — the gang scheduler's job is done
// right then, so such samples do not count.
type partialSampler struct {
	whole            int
	mu               sync.Mutex
	samples, overlap int
	maxBound         map[string]int
}

func (s *partialSampler) run(stop <-chan struct{}, bound func(Gomega) map[string]int) {
	s.maxBound = map[string]int{}
	sampleEvery(100*time.Millisecond, stop, func() {
		b := bound(NewGomega(func(string, ...int) {}))
		s.mu.Lock()
		defer s.mu.Unlock()
		s.samples++
		partial := 0
		for k, n := range b {
			s.maxBound[k] = max(s.maxBound[k], n)
		}
		for k, n := range b {
			if n > 0 && s.maxBound[k] < s.whole {
				partial++
			}
		}
		if partial > 1 {
			s.overlap++
		}
	})
}

func (s *partialSampler) check(t *testing.T, g *WithT) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("%d samples, %d with pods of both groups bound before either was whole; most bound at once %v", s.samples, s.overlap, s.maxBound)
	g.Expect(s.samples).To(BeNumerically(">", 20))
	g.Expect(s.overlap).To(BeZero(), "the gang scheduler bound parts of both jobs")
}

// TestGangSchedulerBindsOneJobWholeJob: two 16-pod Jobs on 24 GPUs, both
// admitted by quota, under each gang scheduler this cluster runs.
func TestGangSchedulerBindsOneJobWhole(t *testing.T) {
	for _, p := range []musterv1beta1.GangSchedulerProvider{musterv1beta1.GangKubeScheduler, musterv1beta1.GangCoscheduling} {
		t.Run(string(p), func(t *testing.T) {
			g := NewWithT(t)
			ns := namespace(t)
			gangQueues(t, ns, p)
			a, b := gpuJob(ns, "a", "main", 16, "5s"), gpuJob(ns, "b", "main", 16, "5s")
			createAll(t, a, b)
			g.Eventually(func(g Gomega) {
				var wls musterv1beta1.WorkloadList
				g.Expect(c.List(context.Background(), &wls, client.InNamespace(ns))).To(Succeed())
				g.Expect(wls.Items).To(HaveLen(2))
				for _, wl := range wls.Items {
					g.Expect(wl.Status.Admission).NotTo(BeNil(), "both are admitted by quota")
				}
			}, timeout, time.Second).Should(Succeed())

			stop := make(chan struct{})
			s := &partialSampler{whole: 16}
			go s.run(stop, func(g Gomega) map[string]int {
				boundA, _, _, _ := podsOf(g, ns, "a")
				boundB, _, _, _ := podsOf(g, ns, "b")
				return map[string]int{"a": boundA, "b": boundB}
			})
			g.Eventually(func(g Gomega) bool { return jobSucceeded(g, ns, "a") && jobSucceeded(g, ns, "b") }, timeout, time.Second).Should(BeTrue())
			close(stop)
			s.check(t, g)
			g.Expect(s.maxBound).To(Equal(map[string]int{"a": 16, "b": 16}), "each job was bound whole in turn")
		})
	}
}

// TestGangSchedulerBindsPyTorchJobsWhole: the same with two PyTorchJobs of
// a Master and 15 Workers, created by the training operator from the
// templates Muster marked; kube-scheduler gangs each pod set.
func TestGangSchedulerBindsPyTorchJobsWhole(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	gangQueues(t, ns, musterv1beta1.GangKubeScheduler)
	for _, name := range []string{"a", "b"} {
		pt := MakePyTorchJob(name, ns).Queue("main").Request("Master", gpu, "1").
			Replicas("Worker", 15).Request("Worker", gpu, "1").Obj()
		for _, rs := range pt.Spec.PyTorchReplicaSpecs {
			rs.Template.Annotations = map[string]string{"muster.dev/runtime": "5s"}
		}
		createAll(t, pt)
	}
	workers := func(g Gomega, job string) int {
		var pods corev1.PodList
		g.Expect(c.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{
			"training.kubeflow.org/job-name": job, "training.kubeflow.org/replica-type": "worker"})).To(Succeed())
		n := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				n++
			}
		}
		return n
	}
	stop := make(chan struct{})
	s := &partialSampler{whole: 15}
	go s.run(stop, func(g Gomega) map[string]int { return map[string]int{"a": workers(g, "a"), "b": workers(g, "b")} })
	g.Eventually(func(g Gomega) {
		for _, name := range []string{"a", "b"} {
			var got kftraining.PyTorchJob
			g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &got)).To(Succeed())
			g.Expect(got.Status.Conditions).To(ContainElement(And(HaveField("Type", kftraining.JobSucceeded), HaveField("Status", corev1.ConditionTrue))),
				fmt.Sprintf("PyTorchJob %s succeeded", name))
		}
	}, timeout, time.Second).Should(Succeed())
	close(stop)
	s.check(t, g)
	g.Expect(s.maxBound).To(Equal(map[string]int{"a": 15, "b": 15}), "each job's workers were bound whole in turn")
}

// TestGangSchedulerRunsAJobInWaves: a Job of 4 pods at once and 6
// completions (the shape partial admission leaves) has 2 pods left once
// the first 4 succeed. Its pod group's minimum comes down with it, so the
// gang scheduler binds the last 2 instead of holding them for a gang of 4
// that can no longer form.
func TestGangSchedulerRunsAJobInWaves(t *testing.T) {
	for _, p := range []musterv1beta1.GangSchedulerProvider{musterv1beta1.GangKubeScheduler, musterv1beta1.GangCoscheduling} {
		t.Run(string(p), func(t *testing.T) {
			g := NewWithT(t)
			ns := namespace(t)
			gangQueues(t, ns, p)
			j := gpuJob(ns, "waves", "main", 4, "3s")
			j.Spec.Completions = ptr.To[int32](6)
			createAll(t, j)
			g.Eventually(func(g Gomega) bool { return jobSucceeded(g, ns, j.Name) }, timeout, time.Second).Should(BeTrue(),
				"the last 2 pods ran")
		})
	}
}
