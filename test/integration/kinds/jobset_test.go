package kinds

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

// jobSet is a driver Job asking for 1 GPU and workers child Jobs of two
// pods asking for 1 GPU each: 1 + 2 × workers GPUs.
func jobSet(name, ns string, workers int32) *jobsetv1alpha2.JobSet {
	return MakeJobSet(name, ns).Queue("main").
		ReplicatedJob("driver", 1, 1, gpu, "1").
		ReplicatedJob("workers", workers, 2, gpu, "1").Obj()
}

func getJobSet(g Gomega, js *jobsetv1alpha2.JobSet) *jobsetv1alpha2.JobSet {
	var got jobsetv1alpha2.JobSet
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(js), &got)).To(Succeed())
	return &got
}

func templateOf(js *jobsetv1alpha2.JobSet, i int) *batchv1.JobTemplateSpec {
	return &js.Spec.ReplicatedJobs[i].Template
}

// A JobSet is admitted whole — one pod set per replicated job, every child
// Job's pods — and started with the placement in each replicated job's
// template; a second waits for the whole of its quota and gets it when the
// first completes.
func TestJobSetIsAdmittedWholeAndReleasedWhenItCompletes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "8")
	first, second := jobSet("first", ns, 3), jobSet("second", ns, 3)
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Expect(ptr.Deref(first.Spec.Suspend, false)).To(BeTrue(), "created suspended")
	eventually(t, func(g Gomega) {
		wl := workloadOf(g, "JobSet", first)
		g.Expect(wl.Spec.PodSets).To(HaveLen(2))
		g.Expect(wl.Spec.PodSets[0].Name).To(Equal("driver"))
		g.Expect(wl.Spec.PodSets[1].Count).To(BeEquivalentTo(6), "3 child Jobs of 2 pods")
	})
	eventually(t, func(g Gomega) {
		got := getJobSet(g, first)
		g.Expect(ptr.Deref(got.Spec.Suspend, true)).To(BeFalse())
		for i := range got.Spec.ReplicatedJobs {
			g.Expect(templateOf(got, i).Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
		}
	})

	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	eventually(t, func(g Gomega) {
		pendingWith(g, workloadOf(g, "JobSet", second), "the whole workload needs 7 nvidia.com/gpu")
	})

	// The JobSet controller reports it complete (none runs here).
	eventually(t, func(g Gomega) {
		got := getJobSet(g, first)
		meta.SetStatusCondition(&got.Status.Conditions, metav1.Condition{Type: string(jobsetv1alpha2.JobSetCompleted),
			Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "jobset completed successfully"})
		g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		g.Expect(workload.IsFinished(workloadOf(g, "JobSet", first))).To(BeTrue())
		g.Expect(ptr.Deref(getJobSet(g, second).Spec.Suspend, true)).To(BeFalse(), "admitted on the quota the first released")
	})
}

// A child Job the JobSet controller creates carries the JobSet's labels;
// it is the JobSet's part, neither suspended nor given a Workload.
func TestAJobSetsChildJobsAreNotGatedAgain(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "8")
	js := jobSet("parent", ns, 1)
	g.Expect(env.Client.Create(ctx, js)).To(Succeed())
	eventually(t, func(g Gomega) { g.Expect(ptr.Deref(getJobSet(g, js).Spec.Suspend, true)).To(BeFalse()) })

	child := MakeJob("parent-workers-0", ns).Queue("main").Parallelism(2).Request(gpu, "1").Obj()
	child.Spec.Suspend = ptr.To(false)
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: jobsetv1alpha2.GroupVersion.String(), Kind: "JobSet",
		Name: js.Name, UID: js.UID, Controller: ptr.To(true)}}
	g.Expect(env.Client.Create(ctx, child)).To(Succeed())
	g.Expect(ptr.Deref(child.Spec.Suspend, true)).To(BeFalse(), "not suspended by the webhook")
	g.Consistently(func(g Gomega) {
		var got batchv1.Job
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(child), &got)).To(Succeed())
		g.Expect(ptr.Deref(got.Spec.Suspend, true)).To(BeFalse())
		var wls musterv1beta1.WorkloadList
		g.Expect(env.Client.List(ctx, &wls, client.InNamespace(ns))).To(Succeed())
		g.Expect(wls.Items).To(HaveLen(1), "the JobSet's Workload only")
	}, "2s", "200ms").Should(Succeed())
}

// An evicted JobSet is suspended with its templates as the user wrote
// them: Muster's placement gone, the user's own node selector kept.
func TestAnEvictedJobSetGetsItsTemplatesBack(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ns, cq := setup(t, "8")
	js := jobSet("evicted", ns, 2)
	templateOf(js, 1).Spec.Template.Spec.NodeSelector = map[string]string{"zone": "a"}
	g.Expect(env.Client.Create(context.Background(), js)).To(Succeed())
	eventually(t, func(g Gomega) {
		g.Expect(templateOf(getJobSet(g, js), 1).Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
	})
	holdQueue(t, cq)
	evict(t, "JobSet", js)
	eventually(t, func(g Gomega) {
		got := getJobSet(g, js)
		g.Expect(ptr.Deref(got.Spec.Suspend, false)).To(BeTrue())
		g.Expect(templateOf(got, 0).Spec.Template.Spec.NodeSelector).To(BeEmpty())
		g.Expect(templateOf(got, 0).Spec.Template.Spec.Tolerations).To(BeEmpty())
		g.Expect(templateOf(got, 1).Spec.Template.Spec.NodeSelector).To(Equal(map[string]string{"zone": "a"}))
		g.Expect(workloadOf(g, "JobSet", js).Status.Admission).To(BeNil())
	})
}
