package gang

import (
	"context"
	"testing"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	. "github.com/onsi/gomega"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// Partial admission: a job that allows fewer pods than it asks starts with
// the most that fit, and gets its count back when stopped.

func admittedCount(g Gomega, wl *musterv1beta1.Workload, podSet string) int32 {
	g.Expect(wl.Status.Admission).NotTo(BeNil())
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		if psa.Name == podSet {
			return ptr.Deref(psa.Count, -1)
		}
	}
	return -1
}

func TestJobStartsWithTheParallelismThatFits(t *testing.T) {
	q := newGangQueue(t, musterv1beta1.GangNone, "", "8")
	cases := map[string]struct {
		job             string
		edit            func(*JobBuilder)
		wantCompletions int32
	}{
		// Fewer pods at once run the same completions.
		"non-indexed keeps its completions": {job: "plain", edit: func(b *JobBuilder) {}, wantCompletions: 12},
		// An Indexed Job keeps its indexes: each is work to do.
		"indexed keeps its completions": {job: "indexed", edit: func(b *JobBuilder) { b.Indexed() }, wantCompletions: 12},
		// Unless its completions follow its parallelism (Kueue's opt-in).
		"indexed with completions = parallelism": {job: "elastic", edit: func(b *JobBuilder) {
			b.Indexed().Annotation("kueue.x-k8s.io/job-completions-equal-parallelism", "true")
		}, wantCompletions: 8},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job, wl := startedJob(t, q, tc.job, 12, func(b *JobBuilder) {
				b.Annotation("kueue.x-k8s.io/job-min-parallelism", "4")
				tc.edit(b)
			})
			g := NewWithT(t)
			g.Expect(admittedCount(g, wl, "main")).To(Equal(int32(8)))
			g.Expect(wl.Spec.PodSets[0].MinCount).To(Equal(ptr.To[int32](4)))
			g.Expect(*job.Spec.Parallelism).To(Equal(int32(8)))
			g.Expect(*job.Spec.Completions).To(Equal(tc.wantCompletions))
			g.Expect(job.Annotations).To(HaveKey(jobframework.OriginalCountsAnnotation))
			// Started smaller is not "changed": no eviction follows.
			framework.HoldsFor(t, func(g Gomega) { g.Expect(framework.IsSuspended(env.GetJob(g, job))).To(BeFalse()) })

			deactivate(t, wl)
			g.Eventually(func(g Gomega) {
				cur := env.GetJob(g, job)
				g.Expect(framework.IsSuspended(cur)).To(BeTrue())
				g.Expect(*cur.Spec.Parallelism).To(Equal(int32(12)))
				g.Expect(*cur.Spec.Completions).To(Equal(int32(12)))
				g.Expect(cur.Annotations).NotTo(HaveKey(jobframework.OriginalCountsAnnotation))
			}).Should(Succeed())
		})
	}
}

func TestJobAllowingNoFewerSaysWhatWouldFit(t *testing.T) {
	q := newGangQueue(t, musterv1beta1.GangNone, "", "8")
	job := MakeJob("big", q.ns).Queue(q.lq).Parallelism(12).Request(gpu, "1").Obj()
	env.CreateAll(t, job)
	env.ExpectJobPending(t, job, "8 of the 12 pods of pod set main would fit now, but the job may not start with fewer than all")

	short := MakeJob("short", q.ns).Queue(q.lq).Parallelism(12).Request(gpu, "1").Annotation(musterv1beta1.JobMinParallelismAnnotation, "10").Obj()
	env.CreateAll(t, short)
	env.ExpectJobPending(t, short, "not even the 10 pods pod set main may start with fit")
}

func TestJobMinParallelismIsValidated(t *testing.T) {
	q := newGangQueue(t, musterv1beta1.GangNone, "", "8")
	g := NewWithT(t)
	for _, v := range []string{"0", "x", "13"} {
		job := MakeJob("bad", q.ns).Queue(q.lq).Parallelism(12).Request(gpu, "1").Annotation(musterv1beta1.JobMinParallelismAnnotation, v).Obj()
		err := env.Client.Create(context.Background(), job)
		g.Expect(err).To(MatchError(ContainSubstring("job-min-parallelism")), "value %q", v)
	}
}

func TestElasticPyTorchJobStartsWithFewerWorkers(t *testing.T) {
	q := newGangQueue(t, musterv1beta1.GangNone, "", "5")
	pj := MakePyTorchJob("ddp", q.ns).Queue(q.lq).Replicas(kftraining.PyTorchJobReplicaTypeWorker, 6).
		Request(kftraining.PyTorchJobReplicaTypeMaster, gpu, "1").Request(kftraining.PyTorchJobReplicaTypeWorker, gpu, "1").Obj()
	pj.Spec.ElasticPolicy = &kftraining.ElasticPolicy{MinReplicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](6)}
	env.CreateAll(t, pj)
	g := NewWithT(t)
	var cur kftraining.PyTorchJob
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(pj), &cur)).To(Succeed())
		g.Expect(cur.Spec.RunPolicy.Suspend).To(Equal(ptr.To(false)))
	}).Should(Succeed())
	g.Expect(cur.Spec.PyTorchReplicaSpecs[kftraining.PyTorchJobReplicaTypeWorker].Replicas).To(Equal(ptr.To[int32](4)))
	g.Expect(cur.Spec.PyTorchReplicaSpecs[kftraining.PyTorchJobReplicaTypeMaster].Replicas).To(Equal(ptr.To[int32](1)))

	deactivate(t, onlyWorkload(t, q.ns))
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(pj), &cur)).To(Succeed())
		g.Expect(cur.Spec.RunPolicy.Suspend).To(Equal(ptr.To(true)))
		g.Expect(cur.Spec.PyTorchReplicaSpecs[kftraining.PyTorchJobReplicaTypeWorker].Replicas).To(Equal(ptr.To[int32](6)))
	}).Should(Succeed())
}

func TestRayClusterWorkerGroupStartsWithFewerWorkers(t *testing.T) {
	q := newGangQueue(t, musterv1beta1.GangNone, "", "5")
	rc := MakeRayCluster("ray", q.ns).Queue(q.lq).WorkerGroup("gpu", 6, gpu, "1").Obj()
	rc.Spec.WorkerGroupSpecs[0].MinReplicas = ptr.To[int32](2)
	env.CreateAll(t, rc)
	g := NewWithT(t)
	var cur rayv1.RayCluster
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(rc), &cur)).To(Succeed())
		g.Expect(cur.Spec.Suspend).To(Equal(ptr.To(false)))
	}).Should(Succeed())
	g.Expect(cur.Spec.WorkerGroupSpecs[0].Replicas).To(Equal(ptr.To[int32](5)), "the head takes no GPU: 5 of 6 workers fit")

	deactivate(t, onlyWorkload(t, q.ns))
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(rc), &cur)).To(Succeed())
		g.Expect(cur.Spec.Suspend).To(Equal(ptr.To(true)))
		g.Expect(cur.Spec.WorkerGroupSpecs[0].Replicas).To(Equal(ptr.To[int32](6)))
	}).Should(Succeed())
}

// onlyWorkload is the one Workload of a namespace.
func onlyWorkload(t *testing.T, ns string) *musterv1beta1.Workload {
	t.Helper()
	g := NewWithT(t)
	var wls musterv1beta1.WorkloadList
	g.Expect(env.Client.List(context.Background(), &wls, client.InNamespace(ns))).To(Succeed())
	g.Expect(wls.Items).To(HaveLen(1))
	return &wls.Items[0]
}
