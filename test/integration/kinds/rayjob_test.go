package kinds

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

func rayJob(name, ns string, workers int32) *rayv1.RayJob {
	cluster := MakeRayCluster(name, ns).HeadRequest(gpu, "1").WorkerGroup("gpu-workers", workers, gpu, "2").Obj()
	return MakeRayJob(name, ns, cluster.Spec).Queue("main").Obj()
}

func getRayJob(g Gomega, j *rayv1.RayJob) *rayv1.RayJob {
	var got rayv1.RayJob
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(j), &got)).To(Succeed())
	return &got
}

// A RayJob is admitted whole — head, workers and submitter — and started
// with its placement in its cluster's templates; a second one waits for the whole of
// its quota, and gets it when the first finishes.
func TestRayJobIsAdmittedWholeAndReleasedWhenItFinishes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "8")
	first, second := rayJob("first", ns, 3), rayJob("second", ns, 3)
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Expect(first.Spec.Suspend).To(BeTrue(), "created suspended")
	eventually(t, func(g Gomega) {
		wl := workloadOf(g, "RayJob", first)
		g.Expect(wl.Spec.PodSets).To(HaveLen(3))
		g.Expect([]string{wl.Spec.PodSets[0].Name, wl.Spec.PodSets[1].Name, wl.Spec.PodSets[2].Name}).
			To(Equal([]string{"head", "worker-gpu-workers", "submitter"}))
		g.Expect(wl.Spec.PodSets[1].Count).To(BeEquivalentTo(3))
	})
	eventually(t, func(g Gomega) {
		got := getRayJob(g, first)
		g.Expect(got.Spec.Suspend).To(BeFalse())
		g.Expect(got.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
		g.Expect(got.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
		// The submitter asks for nothing the queue covers: admitted with
		// the rest, it gets no flavor and so no placement.
		g.Expect(workloadOf(g, "RayJob", first).Status.Admission.PodSetAssignments).To(HaveLen(3))
	})

	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	eventually(t, func(g Gomega) {
		pendingWith(g, workloadOf(g, "RayJob", second), "the whole workload needs 7 nvidia.com/gpu")
	})

	// KubeRay reports the job done (no operator runs here).
	eventually(t, func(g Gomega) {
		got := getRayJob(g, first)
		got.Status.JobDeploymentStatus, got.Status.JobStatus = rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded
		g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		g.Expect(workload.IsFinished(workloadOf(g, "RayJob", first))).To(BeTrue())
		g.Expect(getRayJob(g, second).Spec.Suspend).To(BeFalse(), "admitted on the quota the first released")
	})
}

// The RayCluster KubeRay creates for a RayJob copies the RayJob's labels,
// the queue label among them; it is the RayJob's part, admitted with it,
// and neither suspended nor given a Workload of its own.
func TestARayJobsClusterIsNotGatedAgain(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "8")
	job := rayJob("parent", ns, 1)
	g.Expect(env.Client.Create(ctx, job)).To(Succeed())
	eventually(t, func(g Gomega) { g.Expect(getRayJob(g, job).Spec.Suspend).To(BeFalse()) })

	child := rayCluster("parent-x7k2p", ns, 1)
	child.Spec.Suspend = ptr.To(false)
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: rayv1.GroupVersion.String(), Kind: "RayJob",
		Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}
	g.Expect(env.Client.Create(ctx, child)).To(Succeed())
	g.Expect(ptr.Deref(child.Spec.Suspend, true)).To(BeFalse(), "not suspended by the webhook")
	g.Consistently(func(g Gomega) {
		g.Expect(ptr.Deref(getRayCluster(g, child).Spec.Suspend, true)).To(BeFalse())
		var wls musterv1beta1.WorkloadList
		g.Expect(env.Client.List(ctx, &wls, client.InNamespace(ns))).To(Succeed())
		g.Expect(wls.Items).To(HaveLen(1), "the RayJob's Workload only")
	}, "2s", "200ms").Should(Succeed())
}

// A RayJob Muster cannot admit whole is refused at creation with what to
// change.
func TestRayJobOnAnExistingClusterIsRefused(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ns, _ := setup(t, "8")
	j := rayJob("shared", ns, 1)
	j.Spec.RayClusterSpec = nil
	j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "shared"}
	err := env.Client.Create(context.Background(), j)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.clusterSelector"))
}
