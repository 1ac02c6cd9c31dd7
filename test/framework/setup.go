package framework

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/test/builder"
)

// The setup every suite shares: a namespace of its own per test, objects
// deleted when the test ends, and the usual one-flavor GPU queue. They take
// a client, so the envtest suites and the end-to-end suite (a real
// cluster) use the same helpers.

// GPU is the extended resource the suites ask for.
const GPU = corev1.ResourceName("nvidia.com/gpu")

// NewNamespace creates a namespace with a generated name and labels,
// deleted when the test ends.
func NewNamespace(t testing.TB, c client.Client, prefix string, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: labels}}
	NewWithT(t).Expect(c.Create(context.Background(), ns)).To(Succeed())
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	return ns.Name
}

// CreateAll creates objects and deletes them (in the background, with
// their dependents) when the test ends.
func CreateAll(t testing.TB, c client.Client, objs ...client.Object) {
	t.Helper()
	g := NewWithT(t)
	for _, o := range objs {
		g.Expect(c.Create(context.Background(), o)).To(Succeed(), "%T %s", o, o.GetName())
	}
	t.Cleanup(func() {
		for _, o := range objs {
			_ = c.Delete(context.Background(), o, client.PropagationPolicy(metav1.DeletePropagationBackground))
		}
	})
}

// GPUQueue is a test's namespace with LocalQueue "main" feeding a
// ClusterQueue of its own (cq-<namespace>) that has a GPU quota in one
// flavor (<flavor>-<namespace>, node label gpu=a100).
type GPUQueue struct {
	Namespace, Flavor, ClusterQueue, LocalQueue string
}

// NewGPUQueue creates a namespace and its GPU queue, deleted when the test
// ends.
func (e *Env) NewGPUQueue(t testing.TB, prefix, flavor, gpuQuota string) GPUQueue {
	t.Helper()
	ns := e.NewNamespace(t, prefix, nil)
	q := GPUQueue{Namespace: ns, Flavor: flavor + "-" + ns, ClusterQueue: "cq-" + ns, LocalQueue: "main"}
	e.CreateAll(t,
		builder.MakeResourceFlavor(q.Flavor).NodeLabel("gpu", "a100").QuotaOnly().Obj(),
		builder.MakeClusterQueue(q.ClusterQueue).ResourceGroup(builder.MakeFlavorQuotas(q.Flavor).Resource(GPU, gpuQuota).Obj()).Obj(),
		builder.MakeLocalQueue(q.LocalQueue, ns).ClusterQueue(q.ClusterQueue).Obj())
	return q
}

// JobGVK is batch/v1 Job's kind.
var JobGVK = batchv1.SchemeGroupVersion.WithKind("Job")

// CreateNode creates a node with its status, deleted when the test ends.
// The API server's TaintNodesByCondition taints a new node not-ready; with
// no node lifecycle controller here, the test lifts the taint as that
// controller would once the node is Ready.
func (e *Env) CreateNode(t testing.TB, n *corev1.Node) {
	t.Helper()
	ctx := context.Background()
	status := n.Status
	if err := e.Client.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Client.Delete(context.Background(), n) })
	n.Status = status
	if err := e.Client.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	n.Spec.Taints = nil
	if err := e.Client.Update(ctx, n); err != nil {
		t.Fatal(err)
	}
}
