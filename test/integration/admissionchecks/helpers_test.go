package admissionchecks

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const gpu = framework.GPU

// checkedQueue is a namespace with a GPU queue (quota only, or with node
// fit) whose ClusterQueue has the given checks.
type checkedQueue struct {
	ns, cq, flavor string
}

func newCheckedQueue(t *testing.T, quota string, nodeFit bool, checks ...string) checkedQueue {
	t.Helper()
	ns := env.NewNamespace(t, "checks", nil)
	q := checkedQueue{ns: ns, cq: "cq-" + ns, flavor: "f-" + ns}
	rf := MakeResourceFlavor(q.flavor).NodeLabel("pool", ns)
	if !nodeFit {
		rf = rf.QuotaOnly()
	}
	env.CreateAll(t, rf.Obj(),
		MakeClusterQueue(q.cq).ResourceGroup(MakeFlavorQuotas(q.flavor).Resource(gpu, quota).Obj()).AdmissionChecks(checks...).Obj(),
		MakeLocalQueue("main", ns).ClusterQueue(q.cq).Obj())
	return q
}

func (q checkedQueue) job(t *testing.T, name string, pods int32, gpus string) *batchv1.Job {
	t.Helper()
	j := MakeJob(name, q.ns).Queue("main").Parallelism(pods).Request(gpu, gpus).Obj()
	env.CreateAll(t, j)
	return j
}

// createCheck creates an AdmissionCheck, deleted when the test ends.
func createCheck(t *testing.T, objs ...client.Object) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, o) })
	}
}

// setActive sets an AdmissionCheck's Active condition, as its controller
// would.
func setActive(t *testing.T, name string, active bool) {
	t.Helper()
	eventually(t, func(g Gomega) {
		var ac musterv1beta1.AdmissionCheck
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &ac)).To(Succeed())
		status, reason := metav1.ConditionFalse, "NotReady"
		if active {
			status, reason = metav1.ConditionTrue, "Active"
		}
		meta.SetStatusCondition(&ac.Status.Conditions, metav1.Condition{Type: musterv1beta1.AdmissionCheckActive, Status: status, Reason: reason, Message: "set by the test"})
		g.Expect(env.Client.Status().Update(context.Background(), &ac)).To(Succeed())
	})
}

// answer writes a check's state on the job's workload, as a third-party
// check controller does.
func answer(t *testing.T, j *batchv1.Job, st musterv1beta1.AdmissionCheckState) {
	t.Helper()
	eventually(t, func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(workload.SetCheckState(wl, st, time.Now())).To(BeTrue(), "check %s not on the workload yet", st.Name)
		g.Expect(env.Client.Status().Update(context.Background(), wl)).To(Succeed())
	})
}

func checkState(g Gomega, wl *musterv1beta1.Workload, name string) musterv1beta1.CheckState {
	st := workload.FindCheck(wl, name)
	g.Expect(st).NotTo(BeNil(), "workload has no check %s", name)
	return st.State
}

// expectWaitingForChecks: quota reserved, not admitted, the job suspended.
func expectWaitingForChecks(t *testing.T, j *batchv1.Job) {
	t.Helper()
	eventually(t, func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(workload.HoldsQuota(wl)).To(BeTrue())
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadAdmitted)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(musterv1beta1.ReasonUnsatisfiedChecks))
	})
	consistently(t, func(g Gomega) {
		g.Expect(*env.GetJob(g, j).Spec.Suspend).To(BeTrue(), "job started before its checks passed")
	})
}

func queueActive(g Gomega, cq string) *metav1.Condition {
	var obj musterv1beta1.ClusterQueue
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: cq}, &obj)).To(Succeed())
	c := meta.FindStatusCondition(obj.Status.Conditions, musterv1beta1.ClusterQueueActive)
	g.Expect(c).NotTo(BeNil())
	return c
}

func gpuNode(name, pool string) *corev1.Node {
	return MakeNode(name).Label("pool", pool).Allocatable(gpu, "8").Allocatable(corev1.ResourceCPU, "96").Obj()
}

func eventually(t *testing.T, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Eventually(f, framework.Timeout, framework.Interval).Should(Succeed())
}

func consistently(t *testing.T, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Consistently(f, 2*time.Second, framework.Interval).Should(Succeed())
}

// setChecks sets a ClusterQueue's admission checks.
func setChecks(t *testing.T, cq string, checks ...string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		var obj musterv1beta1.ClusterQueue
		g.Expect(env.Client.Get(context.Background(), keyOf(cq), &obj)).To(Succeed())
		obj.Spec.AdmissionChecks = nil
		for _, c := range checks {
			obj.Spec.AdmissionChecks = append(obj.Spec.AdmissionChecks, musterv1beta1.AdmissionCheckReference(c))
		}
		g.Expect(env.Client.Update(context.Background(), &obj)).To(Succeed())
	})
	eventually(t, func(g Gomega) { g.Expect(queueActive(g, cq).Status).To(Equal(metav1.ConditionTrue)) })
}

func keyOf(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

// activeChecks creates third-party checks (approval), marks them Active
// as their controller would and, for a ClusterQueue named, makes them its
// checks.
func activeChecks(t *testing.T, cq string, names ...string) {
	t.Helper()
	for _, n := range names {
		createCheck(t, MakeAdmissionCheck(n, approval))
		setActive(t, n, true)
	}
	if cq != "" {
		setChecks(t, cq, names...)
	}
}

// expectCheckActive waits for an AdmissionCheck's Active condition.
func expectCheckActive(t *testing.T, name string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		var got musterv1beta1.AdmissionCheck
		g.Expect(env.Client.Get(context.Background(), keyOf(name), &got)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, musterv1beta1.AdmissionCheckActive)).To(BeTrue())
	})
}
