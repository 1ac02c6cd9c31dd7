package topology

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/test/framework"
)

// setNotReadySince turns a node NotReady as the node lifecycle controller
// does: Ready False since the given time.
func setNotReadySince(t *testing.T, name string, since time.Time) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		var n corev1.Node
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &n)).To(Succeed())
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
			Reason: "NodeStatusUnknown", LastTransitionTime: metav1.NewTime(since)}}
		g.Expect(env.Client.Status().Update(context.Background(), &n)).To(Succeed())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// graceJob admits a two-pod rack job and returns it with one of its nodes.
func graceJob(t *testing.T, name string) (*fabric, map[string]int32, string, func(Gomega) map[string]int32) {
	t.Helper()
	f := newFabric(t, 2, 3, "64")
	j := f.job(name, 2, "8", musterv1beta1.PodSetRequiredTopologyAnnotation, rackKey)
	env.CreateAll(t, j)
	before := placement(t, j)
	var node string
	for n := range before {
		node = n
		break
	}
	return f, before, node, func(g Gomega) map[string]int32 { return placedPods(g, env.WorkloadOfJob(g, j)) }
}

// TestNotReadyNodeWaitsOutTheGracePeriod: a node NotReady for 27 of the
// default 30 s moves nothing yet; once the 30 s are up its pod is moved.
func TestNotReadyNodeWaitsOutTheGracePeriod(t *testing.T) {
	g := NewWithT(t)
	_, before, node, placed := graceJob(t, "grace")
	setNotReadySince(t, node, time.Now().Add(-27*time.Second))
	g.Consistently(func(g Gomega) { g.Expect(placed(g)).To(Equal(before)) }, 2*time.Second, framework.Interval).Should(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(placed(g)).NotTo(HaveKey(node)) }, framework.Timeout, framework.Interval).Should(Succeed())
}

// TestNodeFlapChangesNothing: a node NotReady and back Ready within the
// grace period leaves the placement alone, past the time the grace would
// have ended.
func TestNodeFlapChangesNothing(t *testing.T) {
	g := NewWithT(t)
	_, before, node, placed := graceJob(t, "flap")
	setNotReadySince(t, node, time.Now().Add(-28*time.Second))
	setReady(t, node, true)
	g.Consistently(func(g Gomega) { g.Expect(placed(g)).To(Equal(before)) }, 5*time.Second, framework.Interval).Should(Succeed())
}
