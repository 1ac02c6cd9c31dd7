package kinds

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// setup creates a namespace, a flavor labelling nodes pool=<ns> and a
// ClusterQueue of gpuQuota GPUs fed by LocalQueue "main".
func setup(t *testing.T, gpuQuota string) (ns, cq string) {
	ns = env.NewNamespace(t, "kinds", nil)
	cq = "cq-" + ns
	env.CreateAll(t,
		MakeResourceFlavor("f-"+ns).NodeLabel("pool", ns).Toleration(corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists}).QuotaOnly().Obj(),
		MakeClusterQueue(cq).ResourceGroup(MakeFlavorQuotas("f-"+ns).Resource(gpu, gpuQuota).Obj()).Obj(),
		MakeLocalQueue("main", ns).ClusterQueue(cq).Obj())
	return ns, cq
}

// workloadOf returns the workload of a job object of the given kind.
func workloadOf(g Gomega, kind string, obj client.Object) *musterv1beta1.Workload {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	var wl musterv1beta1.Workload
	key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: jobframework.WorkloadName(kind, obj.GetName(), obj.GetUID())}
	g.Expect(env.Client.Get(context.Background(), key, &wl)).To(Succeed())
	return &wl
}

func eventually(t *testing.T, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Eventually(f, framework.Timeout, framework.Interval).Should(Succeed())
}

func pendingWith(g Gomega, wl *musterv1beta1.Workload, want string) {
	g.Expect(wl.Status.Admission).To(BeNil())
	c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Message).To(ContainSubstring(want))
}

// evict marks a workload Evicted, as preemption would.
func evict(t *testing.T, kind string, obj client.Object) {
	t.Helper()
	eventually(t, func(g Gomega) {
		wl := workloadOf(g, kind, obj)
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: musterv1beta1.WorkloadEvicted,
			Status: metav1.ConditionTrue, Reason: musterv1beta1.ReasonPreempted, Message: "evicted by the test"})
		g.Expect(env.Client.Status().Update(context.Background(), wl)).To(Succeed())
	})
}

// holdQueue stops a ClusterQueue so requeued workloads stay pending.
func holdQueue(t *testing.T, cq string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		var obj musterv1beta1.ClusterQueue
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: cq}, &obj)).To(Succeed())
		p := musterv1beta1.Hold
		obj.Spec.StopPolicy = &p
		g.Expect(env.Client.Update(context.Background(), &obj)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		var obj musterv1beta1.ClusterQueue
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: cq}, &obj)).To(Succeed())
		g.Expect(meta.IsStatusConditionFalse(obj.Status.Conditions, musterv1beta1.ClusterQueueActive)).To(BeTrue())
	})
}
