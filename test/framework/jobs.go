package framework

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// Helpers for tests that drive batch/v1 Jobs through Muster.

// IsSuspended reports whether a Job is suspended.
func IsSuspended(j *batchv1.Job) bool { return ptr.Deref(j.Spec.Suspend, false) }

// GetJob returns the latest version of a Job.
func (e *Env) GetJob(g Gomega, j *batchv1.Job) *batchv1.Job {
	var got batchv1.Job
	g.Expect(e.Client.Get(context.Background(), client.ObjectKeyFromObject(j), &got)).To(Succeed())
	return &got
}

// WorkloadOfJob returns the Workload of a Job.
func (e *Env) WorkloadOfJob(g Gomega, j *batchv1.Job) *musterv1beta1.Workload {
	job := e.GetJob(g, j)
	var wl musterv1beta1.Workload
	key := client.ObjectKey{Namespace: j.Namespace, Name: jobframework.WorkloadName("Job", j.Name, job.UID)}
	g.Expect(e.Client.Get(context.Background(), key, &wl)).To(Succeed())
	return &wl
}

// ExpectJobRunning waits until the Job is unsuspended with the given node
// selector entries injected.
func (e *Env) ExpectJobRunning(t *testing.T, j *batchv1.Job, selector map[string]string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		got := e.GetJob(g, j)
		g.Expect(IsSuspended(got)).To(BeFalse(), "job %s still suspended", j.Name)
		for k, v := range selector {
			g.Expect(got.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue(k, v))
		}
	}, Timeout, Interval).Should(Succeed())
}

// ExpectJobPending waits until the Job is suspended and its Workload says
// it waits, with a message containing want.
func (e *Env) ExpectJobPending(t *testing.T, j *batchv1.Job, want string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(IsSuspended(e.GetJob(g, j))).To(BeTrue())
		wl := e.WorkloadOfJob(g, j)
		g.Expect(wl.Status.Admission).To(BeNil())
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring(want))
	}, Timeout, Interval).Should(Succeed())
}

// CompleteJob marks a Job finished as the Job controller would.
func (e *Env) CompleteJob(t *testing.T, j *batchv1.Job) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func() error {
		return e.MarkJobComplete(context.Background(), e.GetJob(g, j))
	}, Timeout, Interval).Should(Succeed())
}

// SetJobActive writes the number of active pods of a Job, as the Job
// controller would (envtest runs none).
func (e *Env) SetJobActive(t *testing.T, j *batchv1.Job, n int32) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func() error {
		got := e.GetJob(g, j)
		got.Status.Active = n
		if n > 0 && got.Status.StartTime == nil {
			now := metav1.Now()
			got.Status.StartTime = &now
		}
		return e.Client.Status().Update(context.Background(), got)
	}, Timeout, Interval).Should(Succeed())
}

// MarkJobComplete writes a Complete status on a Job.
func (e *Env) MarkJobComplete(ctx context.Context, j *batchv1.Job) error {
	now := metav1.Now()
	if j.Status.StartTime == nil {
		j.Status.StartTime = &now
	}
	j.Status.CompletionTime = &now
	j.Status.Succeeded = ptr.Deref(j.Spec.Completions, 1)
	j.Status.Conditions = append(j.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now})
	return e.Client.Status().Update(ctx, j)
}

// HoldsFor checks f for two seconds.
func HoldsFor(t *testing.T, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Consistently(f, 2*time.Second, 100*time.Millisecond).Should(Succeed())
}

// EventReasons lists the reasons of the events on a Job and its Workload.
func (e *Env) EventReasons(g Gomega, ns, jobName string) []string {
	var list corev1.EventList
	g.Expect(e.Client.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	var reasons []string
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == jobName || strings.HasPrefix(ev.InvolvedObject.Name, "job-"+jobName+"-") {
			reasons = append(reasons, ev.Reason)
		}
	}
	return reasons
}

// NewNamespace creates a namespace with a generated name and labels, deleted
// when the test ends.
func (e *Env) NewNamespace(t testing.TB, prefix string, labels map[string]string) string {
	t.Helper()
	return NewNamespace(t, e.Client, prefix, labels)
}

// CreateAll creates objects and deletes them when the test ends.
func (e *Env) CreateAll(t testing.TB, objs ...client.Object) {
	t.Helper()
	CreateAll(t, e.Client, objs...)
}
