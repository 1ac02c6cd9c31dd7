//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

// groupState counts a LeaderWorkerSet group's Pods: running, and waiting
// at Muster's admission gate.
func groupState(g Gomega, ns, lws string, index int) (running, gated int) {
	var pods corev1.PodList
	g.Expect(c.List(context.Background(), &pods, client.InNamespace(ns),
		client.MatchingLabels{lwsv1.SetNameLabelKey: lws, lwsv1.GroupIndexLabelKey: fmt.Sprint(index)})).To(Succeed())
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodRunning:
			running++
		case len(p.Spec.SchedulingGates) > 0 && p.Spec.SchedulingGates[0].Name == musterv1beta1.AdmissionSchedulingGate:
			gated++
		}
	}
	return running, gated
}

func scaleLWS(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		var lws lwsv1.LeaderWorkerSet
		g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &lws)).To(Succeed())
		lws.Spec.Replicas = ptr.To(replicas)
		g.Expect(c.Update(context.Background(), &lws)).To(Succeed())
	}, timeout, time.Second).Should(Succeed())
}

// TestLeaderWorkerSetGroupsAreAdmittedWhole: a LeaderWorkerSet of 2
// groups of 4 two-GPU Pods (Kueue's queue label on the set) through the
// real LeaderWorkerSet controller, on a queue of 8 GPUs: one group runs
// whole, the other waits whole at the gate; scaled to 1, the surviving
// group runs, and the removed group's Workload is gone; scaled back to 2,
// the new group waits whole again.
func TestLeaderWorkerSetGroupsAreAdmittedWhole(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	queues(t, ns, "8", "0")
	worker := MakePod("w", ns).Request(gpu, "2").Request("cpu", "1").Obj()
	worker.Spec.RestartPolicy = corev1.RestartPolicyAlways // a StatefulSet's
	lws := &lwsv1.LeaderWorkerSet{
		ObjectMeta: metav1.ObjectMeta{Name: "serve", Namespace: ns, Labels: map[string]string{musterv1beta1.KueueQueueNameLabel: "main"}},
		Spec: lwsv1.LeaderWorkerSetSpec{Replicas: ptr.To[int32](2), StartupPolicy: lwsv1.LeaderCreatedStartupPolicy,
			RolloutStrategy:      lwsv1.RolloutStrategy{Type: lwsv1.RollingUpdateStrategyType},
			LeaderWorkerTemplate: lwsv1.LeaderWorkerTemplate{Size: ptr.To[int32](4), WorkerTemplate: corev1.PodTemplateSpec{Spec: worker.Spec}}}}
	createAll(t, lws)

	whole := func(g Gomega, running, gated int) string {
		switch {
		case running == 4 && gated == 0:
			return "running"
		case running == 0 && gated == 4:
			return "waiting"
		}
		return fmt.Sprintf("%d running, %d gated", running, gated)
	}
	g.Eventually(func(g Gomega) []string {
		r0, g0 := groupState(g, ns, "serve", 0)
		r1, g1 := groupState(g, ns, "serve", 1)
		return []string{whole(g, r0, g0), whole(g, r1, g1)}
	}, timeout, time.Second).Should(ConsistOf("running", "waiting"), "one group runs whole, the other waits whole")

	scaleLWS(t, ns, "serve", 1)
	g.Eventually(func(g Gomega) {
		r0, g0 := groupState(g, ns, "serve", 0)
		g.Expect(whole(g, r0, g0)).To(Equal("running"), "group 0 runs on the quota")
		r1, g1 := groupState(g, ns, "serve", 1)
		g.Expect(r1 + g1).To(BeZero())
		var wl musterv1beta1.Workload
		err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "leaderworkerset-serve-1"}, &wl)
		g.Expect(err).To(HaveOccurred(), "group 1's workload went with its Pods")
		g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "leaderworkerset-serve-0"}, &wl)).To(Succeed())
		g.Expect(workload.IsAdmitted(&wl)).To(BeTrue())
	}, timeout, time.Second).Should(Succeed())

	scaleLWS(t, ns, "serve", 2)
	g.Eventually(func(g Gomega) string {
		r1, g1 := groupState(g, ns, "serve", 1)
		return whole(g, r1, g1)
	}, timeout, time.Second).Should(Equal("waiting"), "the new group waits whole for quota")
}
