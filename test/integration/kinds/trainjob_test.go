package kinds

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobs/trainjob"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

// torchRuntime is a ClusterTrainingRuntime of a one-CPU dataset
// initializer and a trainer node asking for one GPU (over numNodes 1).
func torchRuntime(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	rt := MakeClusterTrainingRuntime("torch-"+ns).Initializer("dataset-initializer", corev1.ResourceCPU, "1").Trainer("node", gpu, "1").Obj()
	env.CreateAll(t, rt)
	return rt
}

// trainSetup is setup with CPUs for the initializers, gpuQuota GPUs for
// the trainers.
func trainSetup(t *testing.T, gpuQuota string) (ns, cq string) {
	ns = env.NewNamespace(t, "kinds", nil)
	cq = "cq-" + ns
	env.CreateAll(t,
		MakeResourceFlavor("f-"+ns).NodeLabel("pool", ns).Toleration(corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists}).QuotaOnly().Obj(),
		MakeClusterQueue(cq).ResourceGroup(MakeFlavorQuotas("f-"+ns).Resource(corev1.ResourceCPU, "100").Resource(gpu, gpuQuota).Obj()).Obj(),
		MakeLocalQueue("main", ns).ClusterQueue(cq).Obj())
	return ns, cq
}

// trainJobOf reads a TrainJob back, with its runtime.
func trainJobOf(g Gomega, tj, rt *unstructured.Unstructured) *trainjob.Job {
	got := tj.DeepCopy()
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(tj), got)).To(Succeed())
	j, err := trainjob.Loaded(got, rt)
	g.Expect(err).NotTo(HaveOccurred())
	return j
}

// setTrainJobComplete reports the TrainJob complete, as the trainer does
// when its JobSet completes (none runs here).
func setTrainJobComplete(t *testing.T, tj *unstructured.Unstructured) {
	eventually(t, func(g Gomega) {
		got := tj.DeepCopy()
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(tj), got)).To(Succeed())
		g.Expect(unstructured.SetNestedSlice(got.Object, []any{map[string]any{"type": "Complete", "status": "True",
			"reason": "JobSetCompleted", "message": "jobset completed", "lastTransitionTime": "2026-01-01T00:00:00Z"}}, "status", "conditions")).To(Succeed())
		g.Expect(env.Client.Status().Update(context.Background(), got)).To(Succeed())
	})
}

// A TrainJob in a Kueue user's queue is created suspended and admitted
// whole: the initializer's pod and numNodes trainer pods with the
// TrainJob's resourcesPerNode (a limit only), its placement in Muster's
// runtime patch; a second waits for the whole of its quota and gets it
// when the first completes.
func TestTrainJobIsAdmittedWholeAndReleasedWhenItCompletes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := trainSetup(t, "8")
	rt := torchRuntime(t, ns)
	first := MakeTrainJob("first", ns, rt.GetName()).Queue("main").NumNodes(4).Obj()
	_ = unstructured.SetNestedField(first.Object, map[string]any{"limits": map[string]any{string(gpu): "2"}}, "spec", "trainer", "resourcesPerNode")
	second := MakeTrainJob("second", ns, rt.GetName()).Queue("main").NumNodes(4).ResourcesPerNode(gpu, "2").Obj()
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	suspended, _, _ := unstructured.NestedBool(first.Object, "spec", "suspend")
	g.Expect(suspended).To(BeTrue(), "created suspended")
	eventually(t, func(g Gomega) {
		wl := workloadOf(g, "TrainJob", first)
		g.Expect(wl.Spec.PodSets).To(HaveLen(2))
		g.Expect(wl.Spec.PodSets[0].Name).To(Equal("dataset-initializer"))
		g.Expect(wl.Spec.PodSets[1].Count).To(BeEquivalentTo(4))
		g.Expect(wl.Status.Admission).NotTo(BeNil())
	})
	eventually(t, func(g Gomega) {
		j := trainJobOf(g, first, rt)
		g.Expect(j.IsSuspended()).To(BeFalse())
		node := j.Rendered("node")
		g.Expect(node.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
		g.Expect(node.Spec.Tolerations).To(ContainElement(HaveField("Key", "gpu")))
		g.Expect(node.Spec.Containers[0].Resources.Limits).To(HaveKeyWithValue(gpu, resource.MustParse("2")))
	})

	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	eventually(t, func(g Gomega) {
		pendingWith(g, workloadOf(g, "TrainJob", second), "the whole workload needs 8 nvidia.com/gpu")
	})
	setTrainJobComplete(t, first)
	eventually(t, func(g Gomega) {
		g.Expect(workload.IsFinished(workloadOf(g, "TrainJob", first))).To(BeTrue())
		g.Expect(trainJobOf(g, second, rt).IsSuspended()).To(BeFalse(), "admitted on the quota the first released")
	})
}

// A TrainJob naming a runtime that does not exist is refused when it is
// submitted, saying which; so is a runtime kind the trainer does not know.
func TestATrainJobWithoutItsRuntimeIsRefused(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ns, _ := trainSetup(t, "8")
	err := env.Client.Create(context.Background(), MakeTrainJob("lost", ns, "no-such-runtime").Queue("main").Obj())
	g.Expect(err).To(MatchError(ContainSubstring(`ClusterTrainingRuntime "no-such-runtime" does not exist: create it before the TrainJob`)))
	err = env.Client.Create(context.Background(), MakeTrainJob("odd", ns, "x").Queue("main").RuntimeKind("Deployment").Obj())
	g.Expect(err).To(HaveOccurred())
}

// An evicted TrainJob is suspended and Muster's runtime patch emptied; the
// user's own patch stays.
func TestAnEvictedTrainJobGetsItsTemplatesBack(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ns, cq := trainSetup(t, "8")
	rt := torchRuntime(t, ns)
	tj := MakeTrainJob("evicted", ns, rt.GetName()).Queue("main").Obj()
	g.Expect(unstructured.SetNestedSlice(tj.Object, []any{map[string]any{"manager": "example.com/team",
		"trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{
			map[string]any{"name": "node", "template": map[string]any{"spec": map[string]any{"template": map[string]any{
				"spec": map[string]any{"nodeSelector": map[string]any{"zone": "a"}}}}}}}}}}}}, "spec", "runtimePatches")).To(Succeed())
	g.Expect(env.Client.Create(context.Background(), tj)).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(trainJobOf(g, tj, rt).Rendered("node").Spec.NodeSelector).To(Equal(map[string]string{"zone": "a", "pool": ns}))
	})
	holdQueue(t, cq)
	evict(t, "TrainJob", tj)
	eventually(t, func(g Gomega) {
		j := trainJobOf(g, tj, rt)
		g.Expect(j.IsSuspended()).To(BeTrue())
		g.Expect(j.Rendered("node").Spec.NodeSelector).To(Equal(map[string]string{"zone": "a"}))
		g.Expect(j.Rendered("dataset-initializer").Spec.NodeSelector).To(BeEmpty())
		g.Expect(workloadOf(g, "TrainJob", tj).Status.Admission).To(BeNil())
	})
}

// The JobSet the trainer makes for a TrainJob is its part: not suspended,
// given no Workload, even with a queue label.
func TestATrainJobsJobSetIsNotGatedAgain(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := trainSetup(t, "8")
	rt := torchRuntime(t, ns)
	tj := MakeTrainJob("parent", ns, rt.GetName()).Queue("main").Obj()
	g.Expect(env.Client.Create(ctx, tj)).To(Succeed())
	eventually(t, func(g Gomega) { g.Expect(trainJobOf(g, tj, rt).IsSuspended()).To(BeFalse()) })

	js := MakeJobSet("parent", ns).Queue("main").ReplicatedJob("node", 1, 1, gpu, "1").Obj()
	js.Spec.Suspend = ptr.To(false)
	js.OwnerReferences = []metav1.OwnerReference{{APIVersion: trainjob.GroupVersion.String(), Kind: "TrainJob",
		Name: tj.GetName(), UID: tj.GetUID(), Controller: ptr.To(true)}}
	g.Expect(env.Client.Create(ctx, js)).To(Succeed())
	g.Expect(ptr.Deref(js.Spec.Suspend, true)).To(BeFalse(), "not suspended by the webhook")
	g.Consistently(func(g Gomega) {
		var got jobsetv1alpha2.JobSet
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(js), &got)).To(Succeed())
		g.Expect(ptr.Deref(got.Spec.Suspend, true)).To(BeFalse())
		var wls musterv1beta1.WorkloadList
		g.Expect(env.Client.List(ctx, &wls, client.InNamespace(ns))).To(Succeed())
		g.Expect(wls.Items).To(HaveLen(1), "the TrainJob's Workload only")
	}, "2s", "200ms").Should(Succeed())
}
