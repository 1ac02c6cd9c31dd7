package jobframework_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs/job"
	"github.com/musterhq/muster/controllers/jobs/raycluster"
)

const testNamespace = "team-a"

func fakeReader(t *testing.T, objs ...client.Object) client.Reader {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, musterv1beta1.AddToScheme, rayv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace, Labels: map[string]string{corev1.LabelMetadataName: testNamespace}}}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(append(objs, ns)...).Build()
}

func queuedJob(queue string, suspended bool) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: testNamespace, UID: types.UID("uid-1")},
		Spec:       batchv1.JobSpec{Suspend: ptr.To(suspended)},
	}
	if queue != "" {
		j.Labels = map[string]string{musterv1beta1.QueueNameLabel: queue}
	}
	return j
}

func TestWebhookSuspendsNewJobsThatNameAQueue(t *testing.T) {
	cases := map[string]struct {
		job           *batchv1.Job
		wantSuspended bool
	}{
		"names a queue":           {job: queuedJob("main", false), wantSuspended: true},
		"names no queue":          {job: queuedJob("", false), wantSuspended: false},
		"in the manager's own ns": {job: func() *batchv1.Job { j := queuedJob("main", false); j.Namespace = "muster-system"; return j }()},
		"in kube-system":          {job: func() *batchv1.Job { j := queuedJob("main", false); j.Namespace = "kube-system"; return j }()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			w := jobframework.NewWebhook(job.Kind, jobframework.Options{ManagerNamespace: "muster-system"}, fakeReader(t))
			g.Expect(w.Default(context.Background(), tc.job)).To(Succeed())
			g.Expect(ptr.Deref(tc.job.Spec.Suspend, false)).To(Equal(tc.wantSuspended))
		})
	}
}

func TestWebhookTakesKueuesLabelOnlyWhenAsked(t *testing.T) {
	g := NewWithT(t)
	j := queuedJob("", false)
	j.Labels = map[string]string{musterv1beta1.KueueQueueNameLabel: "main"}
	off := jobframework.NewWebhook(job.Kind, jobframework.Options{}, fakeReader(t))
	g.Expect(off.Default(context.Background(), j)).To(Succeed())
	g.Expect(*j.Spec.Suspend).To(BeFalse(), "Kueue's label ignored")
	on := jobframework.NewWebhook(job.Kind, jobframework.Options{AcceptKueueQueueLabel: true}, fakeReader(t))
	g.Expect(on.Default(context.Background(), j)).To(Succeed())
	g.Expect(*j.Spec.Suspend).To(BeTrue(), "Kueue's label accepted")
}

func admittedWorkload(j *batchv1.Job) *musterv1beta1.Workload {
	return &musterv1beta1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: jobframework.WorkloadName("Job", j.Name, j.UID), Namespace: j.Namespace},
		Status:     musterv1beta1.WorkloadStatus{Admission: &musterv1beta1.Admission{ClusterQueue: "cq"}},
	}
}

func TestWebhookLocksTheQueueWhileTheJobHoldsQuota(t *testing.T) {
	cases := map[string]struct {
		old      *batchv1.Job
		workload bool
		wantErr  bool
	}{
		"running":                      {old: queuedJob("main", false), wantErr: true},
		"suspended, workload admitted": {old: queuedJob("main", true), workload: true, wantErr: true},
		"suspended, no workload":       {old: queuedJob("main", true)},
		"had no queue":                 {old: queuedJob("", false)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			var objs []client.Object
			if tc.workload {
				objs = append(objs, admittedWorkload(tc.old))
			}
			w := jobframework.NewWebhook(job.Kind, jobframework.Options{}, fakeReader(t, objs...))
			moved := tc.old.DeepCopy()
			moved.Labels = map[string]string{musterv1beta1.QueueNameLabel: "other"}
			_, err := w.ValidateUpdate(context.Background(), tc.old, moved)
			if !tc.wantErr {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).To(ContainSubstring("the queue cannot change while the job holds quota"))
		})
	}
}

func TestWebhookAppliesTheKindsValidationToQueuedJobs(t *testing.T) {
	g := NewWithT(t)
	w := jobframework.NewWebhook(raycluster.Kind, jobframework.Options{}, fakeReader(t))
	rc := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "ray", Namespace: testNamespace},
		Spec:       rayv1.RayClusterSpec{EnableInTreeAutoscaling: ptr.To(true)},
	}
	_, err := w.ValidateCreate(context.Background(), rc)
	g.Expect(err).NotTo(HaveOccurred(), "not queued: not Muster's to refuse")

	rc.Labels = map[string]string{musterv1beta1.QueueNameLabel: "main"}
	_, err = w.ValidateCreate(context.Background(), rc)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.enableInTreeAutoscaling"))
}

// TestWebhookChecksTheRuntimeBoundOnlyWhenItChanges: a malformed bound is
// refused at submission and when an update sets it, but a job that got
// past the webhook with one (created while it was down) can still be
// started and stopped: the reconciler's updates do not touch it.
func TestWebhookChecksTheRuntimeBoundOnlyWhenItChanges(t *testing.T) {
	g := NewWithT(t)
	w := jobframework.NewWebhook(job.Kind, jobframework.Options{}, fakeReader(t))
	bad := queuedJob("main", true)
	bad.Annotations = map[string]string{jobframework.MaxRuntimeAnnotation: "soon"}
	_, err := w.ValidateCreate(context.Background(), bad)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "refused at submission: %v", err)

	started := bad.DeepCopy()
	started.Spec.Suspend = ptr.To(false)
	_, err = w.ValidateUpdate(context.Background(), bad, started)
	g.Expect(err).NotTo(HaveOccurred(), "the reconciler starts it")

	good := queuedJob("main", true)
	_, err = w.ValidateUpdate(context.Background(), good, bad)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "an update that sets a malformed bound is refused: %v", err)
}

// TestWebhookLocksTheRuntimeBoundWhileTheJobHoldsQuota: the workload took
// the bound at submission, so changing it on a running job is refused
// rather than silently ignored; a suspended job without quota may change it.
func TestWebhookLocksTheRuntimeBoundWhileTheJobHoldsQuota(t *testing.T) {
	for name, running := range map[string]bool{"running": true, "suspended, no workload": false} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			w := jobframework.NewWebhook(job.Kind, jobframework.Options{}, fakeReader(t))
			old := queuedJob("main", !running)
			old.Labels[jobframework.MaxExecTimeLabel] = "600"
			changed := old.DeepCopy()
			changed.Labels[jobframework.MaxExecTimeLabel] = "15"
			_, err := w.ValidateUpdate(context.Background(), old, changed)
			if !running {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring("cannot change while the job holds quota")))
		})
	}
}
