package kinds

import (
	"context"
	"testing"

	kfmpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

func getMPIJob(g Gomega, j *kfmpi.MPIJob) *kfmpi.MPIJob {
	var got kfmpi.MPIJob
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(j), &got)).To(Succeed())
	return &got
}

func mpiWorkers(j *kfmpi.MPIJob) *kfmpi.ReplicaSpec {
	return j.Spec.MPIReplicaSpecs[kfmpi.MPIReplicaTypeWorker]
}

// An MPIJob is admitted whole — launcher and workers — and started with
// the placement in both templates; a second waits for the whole of its
// quota and gets it when the first succeeds.
func TestMPIJobIsAdmittedWholeAndReleasedWhenItSucceeds(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "8")
	first, second := MakeMPIJob("first", ns, 6, gpu, "1").Queue("main").Obj(), MakeMPIJob("second", ns, 6, gpu, "1").Queue("main").Obj()
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Expect(ptr.Deref(first.Spec.RunPolicy.Suspend, false)).To(BeTrue(), "created suspended")
	eventually(t, func(g Gomega) {
		wl := workloadOf(g, "MPIJob", first)
		g.Expect(wl.Spec.PodSets).To(HaveLen(2))
		g.Expect([]string{wl.Spec.PodSets[0].Name, wl.Spec.PodSets[1].Name}).To(Equal([]string{"launcher", "worker"}))
	})
	eventually(t, func(g Gomega) {
		got := getMPIJob(g, first)
		g.Expect(ptr.Deref(got.Spec.RunPolicy.Suspend, true)).To(BeFalse())
		g.Expect(mpiWorkers(got).Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
	})
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	eventually(t, func(g Gomega) {
		pendingWith(g, workloadOf(g, "MPIJob", second), "the whole workload needs 6 nvidia.com/gpu")
	})

	eventually(t, func(g Gomega) {
		got := getMPIJob(g, first)
		got.Status.Conditions = []kfmpi.JobCondition{{Type: kfmpi.JobSucceeded, Status: corev1.ConditionTrue, Reason: "MPIJobSucceeded",
			LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		g.Expect(workload.IsFinished(workloadOf(g, "MPIJob", first))).To(BeTrue())
		g.Expect(ptr.Deref(getMPIJob(g, second).Spec.RunPolicy.Suspend, true)).To(BeFalse(), "admitted on the quota the first released")
	})
}

// With a pod group minimum (launcher + 3 workers), an MPIJob of 12 workers
// on 8 GPUs starts with the 8 workers that fit; evicted, it gets its 12
// back.
func TestMPIJobWorkersAreAdmittedPartially(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ns, cq := setup(t, "8")
	j := MakeMPIJob("partial", ns, 12, gpu, "1").Queue("main").MinAvailable(4).Obj()
	g.Expect(env.Client.Create(context.Background(), j)).To(Succeed())
	eventually(t, func(g Gomega) {
		got := getMPIJob(g, j)
		g.Expect(ptr.Deref(got.Spec.RunPolicy.Suspend, true)).To(BeFalse())
		g.Expect(mpiWorkers(got).Replicas).To(HaveValue(BeEquivalentTo(8)))
	})
	holdQueue(t, cq)
	evict(t, "MPIJob", j)
	eventually(t, func(g Gomega) {
		got := getMPIJob(g, j)
		g.Expect(ptr.Deref(got.Spec.RunPolicy.Suspend, false)).To(BeTrue())
		g.Expect(mpiWorkers(got).Replicas).To(HaveValue(BeEquivalentTo(12)))
		g.Expect(mpiWorkers(got).Template.Spec.NodeSelector).To(BeEmpty())
	})
}
