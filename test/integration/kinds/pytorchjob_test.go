package kinds

import (
	"context"
	"testing"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

const (
	master = kftraining.PyTorchJobReplicaTypeMaster
	worker = kftraining.PyTorchJobReplicaTypeWorker
)

func trainingJob(name, ns string, workers int32) *kftraining.PyTorchJob {
	return MakePyTorchJob(name, ns).Queue("main").Request(master, gpu, "1").
		Replicas(worker, workers).Request(worker, gpu, "1").Obj()
}

func getPyTorchJob(g Gomega, j *kftraining.PyTorchJob) *kftraining.PyTorchJob {
	var got kftraining.PyTorchJob
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(j), &got)).To(Succeed())
	return &got
}

func expectPyTorchRunning(t *testing.T, j *kftraining.PyTorchJob, ns string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		got := getPyTorchJob(g, j)
		g.Expect(ptr.Deref(got.Spec.RunPolicy.Suspend, false)).To(BeFalse())
		for _, rt := range []kftraining.ReplicaType{master, worker} {
			spec := got.Spec.PyTorchReplicaSpecs[rt].Template.Spec
			g.Expect(spec.NodeSelector).To(HaveKeyWithValue("pool", ns), "placement of %s", rt)
			g.Expect(spec.Tolerations).To(ContainElement(HaveField("Key", "gpu")))
		}
	})
}

func TestPyTorchJobIsGatedAndAdmittedWhole(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "24")
	first, second := trainingJob("first", ns, 15), trainingJob("second", ns, 15)
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Expect(ptr.Deref(first.Spec.RunPolicy.Suspend, false)).To(BeTrue(), "created suspended")

	eventually(t, func(g Gomega) {
		wl := workloadOf(g, "PyTorchJob", first)
		g.Expect(wl.Spec.PodSets).To(HaveLen(2))
		g.Expect(wl.Spec.PodSets[0].Name).To(Equal("master"))
		g.Expect(wl.Spec.PodSets[0].Count).To(BeEquivalentTo(1))
		g.Expect(wl.Spec.PodSets[1].Name).To(Equal("worker"))
		g.Expect(wl.Spec.PodSets[1].Count).To(BeEquivalentTo(15))
		g.Expect(wl.Spec.PodSets[1].Template.Spec.Containers[0].Resources.Requests).To(HaveKey(gpu))
	})
	expectPyTorchRunning(t, first, ns)

	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	eventually(t, func(g Gomega) {
		pendingWith(g, workloadOf(g, "PyTorchJob", second), "the whole workload needs 16 nvidia.com/gpu")
	})

	// The queue label is locked while the job holds quota.
	got := getPyTorchJob(g, first)
	got.Labels[musterv1beta1.QueueNameLabel] = "other"
	g.Expect(env.Client.Update(ctx, got)).To(MatchError(ContainSubstring("the queue cannot change while the job holds quota")))

	eventually(t, func(g Gomega) {
		got := getPyTorchJob(g, first)
		got.Status.Conditions = append(got.Status.Conditions, kftraining.JobCondition{
			Type: kftraining.JobSucceeded, Status: corev1.ConditionTrue, Reason: "PyTorchJobSucceeded", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()})
		g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())
	})
	expectPyTorchRunning(t, second, ns)
}

func TestPyTorchJobLargerThanQuotaSaysSixteen(t *testing.T) {
	env.StartManager(t)
	ns, _ := setup(t, "8")
	j := trainingJob("too-big", ns, 15)
	NewWithT(t).Expect(env.Client.Create(context.Background(), j)).To(Succeed())
	eventually(t, func(g Gomega) {
		pendingWith(g, workloadOf(g, "PyTorchJob", j), "the whole workload needs 16 nvidia.com/gpu")
		g.Expect(ptr.Deref(getPyTorchJob(g, j).Spec.RunPolicy.Suspend, false)).To(BeTrue())
	})
}

func TestEvictedPyTorchJobIsRestored(t *testing.T) {
	env.StartManager(t)
	ns, cq := setup(t, "8")
	j := trainingJob("evicted", ns, 3)
	j.Spec.PyTorchReplicaSpecs[worker].Template.Spec.NodeSelector = map[string]string{"zone": "a"}
	NewWithT(t).Expect(env.Client.Create(context.Background(), j)).To(Succeed())
	expectPyTorchRunning(t, j, ns)
	holdQueue(t, cq)
	evict(t, "PyTorchJob", j)
	eventually(t, func(g Gomega) {
		got := getPyTorchJob(g, j)
		g.Expect(ptr.Deref(got.Spec.RunPolicy.Suspend, false)).To(BeTrue())
		g.Expect(got.Spec.PyTorchReplicaSpecs[master].Template.Spec.NodeSelector).To(BeEmpty())
		g.Expect(got.Spec.PyTorchReplicaSpecs[master].Template.Spec.Tolerations).To(BeEmpty())
		g.Expect(got.Spec.PyTorchReplicaSpecs[worker].Template.Spec.NodeSelector).To(Equal(map[string]string{"zone": "a"}))
		g.Expect(workloadOf(g, "PyTorchJob", j).Status.Admission).To(BeNil())
	})
}
