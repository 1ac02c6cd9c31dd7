package topology

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/test/framework"
)

// TestRestartKeepsPlacementsAndCapacity stops the manager after one job
// is placed, starts a new one, and checks that a second job gets other
// nodes (the first placement is counted before any of its pods exist)
// and that the first job's pods, created only now, still go where it was
// promised.
func TestRestartKeepsPlacementsAndCapacity(t *testing.T) {
	f := newFabric(t, 1, 4, "64")
	a := f.job("a", 2, "8", musterv1beta1.PodSetRequiredTopologyAnnotation, rackKey)
	env.CreateAll(t, a)
	first := placement(t, a)

	g := NewWithT(t)
	g.Expect(shared.StopE()).To(Succeed())
	var err error
	shared, err = env.StartManagerE()
	g.Expect(err).To(Succeed())

	b := f.job("b", 2, "8", musterv1beta1.PodSetRequiredTopologyAnnotation, rackKey)
	env.CreateAll(t, b)
	second := placement(t, b)
	for n := range second {
		g.Expect(first).NotTo(HaveKey(n), "node %s promised to both", n)
	}
	pods := jobPods(t, a, 2)
	g.Eventually(func(g Gomega) {
		seen := map[string]int32{}
		for _, name := range pods {
			var p corev1.Pod
			g.Expect(env.Client.Get(context.Background(), objectMetaKey(f.ns, name), &p)).To(Succeed())
			g.Expect(p.Spec.SchedulingGates).To(BeEmpty())
			seen[p.Spec.NodeSelector[hostKey]]++
		}
		g.Expect(seen).To(Equal(first))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}
