package gang

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const gpu = framework.GPU

// gangQueue is a namespace with a LocalQueue on a ClusterQueue of quota
// GPUs whose jobs go to provider (queue: its gang queue).
type gangQueue struct{ ns, cq, lq string }

func newGangQueue(t *testing.T, provider musterv1beta1.GangSchedulerProvider, queue, quota string) gangQueue {
	t.Helper()
	q := gangQueue{ns: env.NewNamespace(t, "gang", nil), lq: "main"}
	q.cq = "cq-" + q.ns
	flavor := "f-" + q.ns
	env.CreateAll(t,
		MakeResourceFlavor(flavor).QuotaOnly().Obj(),
		MakeClusterQueue(q.cq).GangScheduling(provider, queue).ResourceGroup(MakeFlavorQuotas(flavor).Resource(gpu, quota).Obj()).Obj(),
		MakeLocalQueue(q.lq, q.ns).ClusterQueue(q.cq).Obj())
	return q
}

// startedJob creates a Job of n one-GPU pods in the queue and waits until
// Muster started it; it returns the Job as started and its Workload.
func startedJob(t *testing.T, q gangQueue, name string, n int32, edit ...func(*JobBuilder)) (*batchv1.Job, *musterv1beta1.Workload) {
	t.Helper()
	b := MakeJob(name, q.ns).Queue(q.lq).Parallelism(n).Request(gpu, "1")
	for _, e := range edit {
		e(b)
	}
	job := b.Obj()
	env.CreateAll(t, job)
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		g.Expect(framework.IsSuspended(env.GetJob(g, job))).To(BeFalse())
	}).Should(Succeed())
	got := env.GetJob(g, job)
	return got, env.WorkloadOfJob(g, got)
}

// podOf creates the pod the Job controller would make from the Job's
// template, through the API server and so through Muster's pod webhook.
func podOf(t *testing.T, job *batchv1.Job, name string) *corev1.Pod {
	t.Helper()
	tpl := job.Spec.Template
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: job.Namespace, Labels: tpl.Labels, Annotations: tpl.Annotations},
		Spec:       *tpl.Spec.DeepCopy(),
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), pod)).To(Succeed())
	return pod
}

// gone waits until an object is deleted or being deleted (kube-apiserver
// puts the podgroup-protection finalizer on every PodGroup; only
// kube-controller-manager, absent here, lifts it).
func gone(t *testing.T, obj client.Object) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(obj.GetDeletionTimestamp()).NotTo(BeNil(), "%s still there", obj.GetName())
	}).Should(Succeed())
}

// get reads an object that must exist.
func get(t *testing.T, obj client.Object) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		return env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	}).Should(Succeed())
}

// deactivate evicts a workload the way a user does: spec.active=false.
func deactivate(t *testing.T, wl *musterv1beta1.Workload) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		var cur musterv1beta1.Workload
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(wl), &cur); err != nil {
			return err
		}
		cur.Spec.Active = ptrFalse()
		return env.Client.Update(context.Background(), &cur)
	}).Should(Succeed())
}

func ptrFalse() *bool { f := false; return &f }

// evictedAndRestored deactivates a started job's workload and waits until
// the job is suspended, its pod groups gone and its template without any
// mark Muster added.
func evictedAndRestored(t *testing.T, job *batchv1.Job, wl *musterv1beta1.Workload, groups ...client.Object) {
	t.Helper()
	deactivate(t, wl)
	for _, obj := range groups {
		gone(t, obj)
	}
	NewWithT(t).Eventually(func(g Gomega) {
		cur := env.GetJob(g, job)
		g.Expect(framework.IsSuspended(cur)).To(BeTrue())
		tpl := cur.Spec.Template
		g.Expect(tpl.Labels).NotTo(HaveKey(musterv1beta1.GangProviderLabel))
		for _, k := range []string{musterv1beta1.GangAddedAnnotation, musterv1beta1.SchedulerNameAnnotation, musterv1beta1.SchedulingGroupAnnotation,
			"scheduling.k8s.io/group-name", "volcano.sh/task-spec"} {
			g.Expect(tpl.Annotations).NotTo(HaveKey(k))
		}
		g.Expect(tpl.Labels).NotTo(HaveKey("scheduling.x-k8s.io/pod-group"))
		g.Expect(tpl.Labels).NotTo(HaveKey("kai.scheduler/queue"))
	}).Should(Succeed())
}
