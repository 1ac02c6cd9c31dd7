package jobs

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

// Quota charges what the pods will request, not what the template spells
// out: the API server turns limits into requests, applies LimitRange
// defaults and adds RuntimeClass overhead only on Pods.

// The usual way to ask for a GPU is a limit. Two 16-GPU Jobs asked that way
// on 24 GPUs: one runs, the other waits for the whole 16.
func TestGPUsGivenOnlyAsLimitsAreCharged(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	q := setupQueues(t, "24")
	ctx := context.Background()
	a := MakeJob("limits-a", q.ns).Queue(q.lq).Parallelism(16).Limit(gpu, "1").Obj()
	b := MakeJob("limits-b", q.ns).Queue(q.lq).Parallelism(16).Limit(gpu, "1").Obj()
	g.Expect(env.Client.Create(ctx, a)).To(Succeed())
	expectRunning(t, a)
	g.Expect(env.Client.Create(ctx, b)).To(Succeed())
	expectPending(t, b, "insufficient quota for nvidia.com/gpu in flavor "+q.flavor+": 16 requested, 8 available (quota 24)")
	wl := workloadOf(g, a)
	g.Expect(wl.Annotations).To(HaveKeyWithValue(musterv1beta1.JobCreatedAtAnnotation, getJob(g, a).CreationTimestamp.UTC().Format(time.RFC3339)))
	usage := wl.Status.Admission.PodSetAssignments[0].ResourceUsage[gpu]
	g.Expect(usage.String()).To(Equal("16"))
	consistently(t, func(g Gomega) { g.Expect(isSuspended(getJob(g, b))).To(BeTrue()) })
	complete(t, a)
	expectRunning(t, b)
}

// An init container limited to more than the main container needs is what
// the pod reserves while it initialises.
func TestInitContainerLimitsAreCharged(t *testing.T) {
	env.StartManager(t)
	q := setupQueues(t, "4")
	j := MakeJob("init", q.ns).Queue(q.lq).Limit(gpu, "1").InitContainerLimit(gpu, "6").Obj()
	NewWithT(t).Expect(env.Client.Create(context.Background(), j)).To(Succeed())
	expectPending(t, j, "6 requested, 4 available (quota 4)")
}

// A namespace's LimitRange fills the requests a container leaves out.
func TestLimitRangeDefaultsAreCharged(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ctx := context.Background()
	q := setupCPUQueues(t, "10")
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: q.ns},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}}}
	g.Expect(env.Client.Create(ctx, lr)).To(Succeed())
	// No request, no limit: the LimitRange's default (4) becomes both.
	j := MakeJob("defaulted", q.ns).Queue(q.lq).Parallelism(3).Obj()
	g.Expect(env.Client.Create(ctx, j)).To(Succeed())
	expectPending(t, j, "insufficient quota for cpu in flavor "+q.flavor+": 12 requested, 10 available (quota 10)")
	wl := workloadOf(g, j)
	got := wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	g.Expect(got.String()).To(Equal("4"), "the Workload records the request its pods will have")

	// A pending job follows a changed LimitRange.
	lr.Spec.Limits[0].Default[corev1.ResourceCPU] = resource.MustParse("3")
	lr.Spec.Limits[0].DefaultRequest = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
	g.Expect(env.Client.Update(ctx, lr)).To(Succeed())
	g.Expect(env.Client.Update(ctx, touched(g, j))).To(Succeed())
	env.ExpectJobRunning(t, j, map[string]string{"cpu": "plain"})
}

// RuntimeClass overhead is charged per pod.
func TestRuntimeClassOverheadIsCharged(t *testing.T) {
	g := NewWithT(t)
	env.StartManager(t)
	ctx := context.Background()
	q := setupCPUQueues(t, "8")
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata-" + q.ns}, Handler: "kata",
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}
	g.Expect(env.Client.Create(ctx, rc)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, rc) })
	j := MakeJob("overhead", q.ns).Queue(q.lq).Parallelism(4).Request(corev1.ResourceCPU, "2").RuntimeClass(rc.Name).Obj()
	g.Expect(env.Client.Create(ctx, j)).To(Succeed())
	expectPending(t, j, "insufficient quota for cpu in flavor "+q.flavor+": 10 requested, 8 available (quota 8)")
}

// setupCPUQueues is setupQueues with a cpu quota on a flavor labelled
// cpu=plain.
func setupCPUQueues(t *testing.T, cpuQuota string) testQueues {
	t.Helper()
	ns := env.NewNamespace(t, "test", nil)
	q := testQueues{ns: ns, flavor: "plain-" + ns, cq: "cq-" + ns, lq: "main"}
	env.CreateAll(t,
		MakeResourceFlavor(q.flavor).NodeLabel("cpu", "plain").QuotaOnly().Obj(),
		MakeClusterQueue(q.cq).ResourceGroup(MakeFlavorQuotas(q.flavor).Resource(corev1.ResourceCPU, cpuQuota).Obj()).Obj(),
		MakeLocalQueue(q.lq, q.ns).ClusterQueue(q.cq).Obj(),
	)
	return q
}

// touched is the job with an annotation changed, so its reconciler runs.
func touched(g Gomega, j *batchv1.Job) *batchv1.Job {
	got := getJob(g, j)
	if got.Annotations == nil {
		got.Annotations = map[string]string{}
	}
	got.Annotations["test/touched"] = "1"
	return got
}
