package jobframework_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs/job"
)

// The generic reconciler's steps on a fake client, one reconcile at a
// time: what the integration suites show end to end against a real API
// server, here without one.

const gpu = corev1.ResourceName("nvidia.com/gpu")

type reconcilerEnv struct {
	c      client.Client
	r      *jobframework.Reconciler[*batchv1.Job]
	events *events.FakeRecorder
}

func newReconcilerEnv(t *testing.T, objs ...client.Object) reconcilerEnv {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, musterv1beta1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(append(objs, ns)...).
		WithStatusSubresource(&musterv1beta1.Workload{}, &batchv1.Job{}).
		WithIndex(&musterv1beta1.Workload{}, jobframework.OwnerIndex, jobframework.OwnerIndexValues).Build()
	rec := events.NewFakeRecorder(100)
	r := jobframework.NewReconcilerWith(c, rec, job.Kind, jobframework.Options{Clock: clock.RealClock{}})
	return reconcilerEnv{c: c, r: r, events: rec}
}

func gpuJob(suspended bool) *batchv1.Job {
	j := queuedJob("main", suspended)
	j.Spec.Parallelism = ptr.To[int32](2)
	j.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{gpu: resource.MustParse("4")}}}}
	return j
}

func (e reconcilerEnv) reconcile(t *testing.T, j *batchv1.Job) {
	t.Helper()
	if _, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(j)}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
}

func (e reconcilerEnv) job(t *testing.T, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	var got batchv1.Job
	if err := e.c.Get(context.Background(), client.ObjectKeyFromObject(j), &got); err != nil {
		t.Fatal(err)
	}
	return &got
}

func (e reconcilerEnv) workloads(t *testing.T) []musterv1beta1.Workload {
	t.Helper()
	var wls musterv1beta1.WorkloadList
	if err := e.c.List(context.Background(), &wls, client.InNamespace(testNamespace)); err != nil {
		t.Fatal(err)
	}
	return wls.Items
}

// admit writes what the scheduler would: the admission in flavor a100 and
// QuotaReserved and Admitted.
func (e reconcilerEnv) admit(t *testing.T, wl *musterv1beta1.Workload) {
	t.Helper()
	wl.Status.Admission = &musterv1beta1.Admission{ClusterQueue: "cq", PodSetAssignments: []musterv1beta1.PodSetAssignment{{
		Name: "main", Count: ptr.To[int32](2), Flavors: map[corev1.ResourceName]musterv1beta1.ResourceFlavorReference{gpu: "a100"},
		ResourceUsage: corev1.ResourceList{gpu: resource.MustParse("8")},
	}}}
	for _, typ := range []string{musterv1beta1.WorkloadQuotaReserved, musterv1beta1.WorkloadAdmitted} {
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: typ})
	}
	if err := e.c.Status().Update(context.Background(), wl); err != nil {
		t.Fatal(err)
	}
}

// evict writes what the scheduler would on the only workload: Evicted
// with the reason.
func (e reconcilerEnv) evict(t *testing.T, reason, msg string) {
	t.Helper()
	wl := e.workloads(t)[0]
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: musterv1beta1.WorkloadEvicted, Status: metav1.ConditionTrue,
		Reason: reason, Message: msg})
	if err := e.c.Status().Update(context.Background(), &wl); err != nil {
		t.Fatal(err)
	}
}

// start takes a queued job through the reconciles that create its
// Workload, then (once admitted) start it.
func (e reconcilerEnv) start(t *testing.T, j *batchv1.Job) {
	t.Helper()
	e.reconcile(t, j)
	wl := e.workloads(t)[0]
	e.admit(t, &wl)
	e.reconcile(t, j)
}

func a100() *musterv1beta1.ResourceFlavor {
	return &musterv1beta1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "a100"},
		Spec: musterv1beta1.ResourceFlavorSpec{NodeLabels: map[string]string{"gpu": "a100"}}}
}

func TestReconcilerCreatesOneWorkloadChargedTheLimits(t *testing.T) {
	g := NewWithT(t)
	j := gpuJob(true)
	e := newReconcilerEnv(t, j)
	e.reconcile(t, j)
	wls := e.workloads(t)
	g.Expect(wls).To(HaveLen(1))
	wl := wls[0]
	g.Expect(string(wl.Spec.QueueName)).To(Equal("main"))
	g.Expect(metav1.IsControlledBy(&wl, e.job(t, j))).To(BeTrue(), "owned by its job")
	g.Expect(wl.Spec.PodSets).To(HaveLen(1))
	g.Expect(wl.Spec.PodSets[0].Count).To(Equal(int32(2)))
	req := wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests[gpu]
	g.Expect(req.String()).To(Equal("4"), "limits-only GPUs are charged as requests")
	e.reconcile(t, j)
	g.Expect(e.workloads(t)).To(HaveLen(1), "a second reconcile creates no second workload")
}

func TestReconcilerSuspendsAJobThatRunsWithoutQuota(t *testing.T) {
	g := NewWithT(t)
	j := gpuJob(false) // the webhook was down
	e := newReconcilerEnv(t, j)
	e.reconcile(t, j)
	g.Expect(ptr.Deref(e.job(t, j).Spec.Suspend, false)).To(BeTrue())
}

func TestReconcilerStartsAnAdmittedJobOnItsFlavor(t *testing.T) {
	g := NewWithT(t)
	j := gpuJob(true)
	e := newReconcilerEnv(t, j, a100())
	e.start(t, j)
	got := e.job(t, j)
	g.Expect(ptr.Deref(got.Spec.Suspend, true)).To(BeFalse(), "started")
	g.Expect(got.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("gpu", "a100"), "placed on its flavor's nodes")
}

func TestReconcilerStopsAnEvictedJobThenReleasesItsQuota(t *testing.T) {
	g := NewWithT(t)
	j := gpuJob(true)
	e := newReconcilerEnv(t, j, a100())
	e.start(t, j)
	e.evict(t, musterv1beta1.ReasonPreempted, "preempted")

	for range 4 { // suspend, restore the placement, release: one write each
		e.reconcile(t, j)
	}
	got := e.job(t, j)
	g.Expect(ptr.Deref(got.Spec.Suspend, false)).To(BeTrue(), "stopped")
	g.Expect(got.Spec.Template.Spec.NodeSelector).NotTo(HaveKey("gpu"), "its original placement restored")
	wl := e.workloads(t)[0]
	g.Expect(wl.Status.Admission).To(BeNil(), "quota released once the job is stopped")
	g.Expect(meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadRequeued)).To(BeTrue())
}

func TestReconcilerFinishesTheWorkloadOfAFinishedJob(t *testing.T) {
	g := NewWithT(t)
	j := gpuJob(true)
	e := newReconcilerEnv(t, j, a100())
	e.start(t, j)
	got := e.job(t, j)
	got.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	g.Expect(e.c.Status().Update(context.Background(), got)).To(Succeed())
	e.reconcile(t, j)
	wl := e.workloads(t)[0]
	c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadFinished)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(c.Reason).To(Equal(musterv1beta1.ReasonSucceeded))
	g.Expect(wl.Finalizers).NotTo(ContainElement(musterv1beta1.ResourceInUseFinalizer), "the quota is released")
}

// TestReconcilerFinishesADeactivationWhoseSpecWriteFailed: the status says
// evicted past the maximum execution time but spec.active is still true
// (the second write failed): the next reconcile deactivates it, so the
// job is not requeued with a fresh allowance.
func TestReconcilerFinishesADeactivationWhoseSpecWriteFailed(t *testing.T) {
	g := NewWithT(t)
	j := gpuJob(true)
	e := newReconcilerEnv(t, j, a100())
	e.start(t, j)
	e.evict(t, musterv1beta1.ReasonMaximumExecutionTimeExceeded, "past its maximum execution time")
	e.reconcile(t, j)
	wl := e.workloads(t)[0]
	g.Expect(ptr.Deref(wl.Spec.Active, true)).To(BeFalse(), "deactivated")
}

// TestReconcilerSaysOnTheJobWhyItHasNoWorkload: a job naming a
// WorkloadPriorityClass that does not exist gets a Warning event saying so
// (Kueue's ErrWorkloadCompose) and is tried again soon, not after the
// error backoff's growing delay; once the class exists its Workload is made.
func TestReconcilerSaysOnTheJobWhyItHasNoWorkload(t *testing.T) {
	g := NewWithT(t)
	j := gpuJob(true)
	j.Labels[musterv1beta1.WorkloadPriorityClassLabel] = "urgent"
	e := newReconcilerEnv(t, j)
	res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(j)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeNumerically(">", 0))
	g.Expect(e.workloads(t)).To(BeEmpty())
	g.Expect(e.events.Events).To(Receive(And(ContainSubstring("ErrWorkloadCompose"), ContainSubstring("urgent"))))

	g.Expect(e.c.Create(context.Background(), &musterv1beta1.WorkloadPriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: "urgent"}, Value: 100})).To(Succeed())
	e.reconcile(t, j)
	g.Expect(e.workloads(t)).To(HaveLen(1))
	g.Expect(*e.workloads(t)[0].Spec.Priority).To(BeEquivalentTo(100))
}

// The API server refuses a suspended Job's template change while it has
// active pods: deleting the Workload of a running Job suspends it, then
// waits for its pods to go before putting its placement back (instead of
// retrying into the refusal while they terminate), then lets the Workload
// go.
func TestReconcilerRestoresADeletedWorkloadsJobOnceItsPodsAreGone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	j := gpuJob(true)
	e := newReconcilerEnv(t, j, a100())
	e.start(t, j)
	running := e.job(t, j)
	running.Status.Active = 2
	g.Expect(e.c.Status().Update(ctx, running)).To(Succeed())
	wl := e.workloads(t)[0]
	g.Expect(e.c.Delete(ctx, &wl)).To(Succeed())

	for range 4 {
		e.reconcile(t, j)
	}
	got := e.job(t, j)
	g.Expect(ptr.Deref(got.Spec.Suspend, false)).To(BeTrue(), "stopped")
	g.Expect(got.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue("gpu", "a100"), "its template left alone while pods are active")
	g.Expect(e.workloads(t)).To(HaveLen(1), "the Workload kept while the pods use its quota")

	got.Status.Active = 0
	g.Expect(e.c.Status().Update(ctx, got)).To(Succeed())
	for range 3 {
		e.reconcile(t, j)
	}
	g.Expect(e.job(t, j).Spec.Template.Spec.NodeSelector).NotTo(HaveKey("gpu"), "its original placement restored")
	for _, w := range e.workloads(t) {
		g.Expect(w.DeletionTimestamp.IsZero()).To(BeTrue(), "the deleted Workload is gone: %s", w.Name)
	}
}
