package scheduling

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// world is one test's namespace, flavor and cohort; queue names are
// prefixed with the namespace so tests never share quota.
type world struct {
	ns, flavor, cohort string
}

func newWorld(t *testing.T) world {
	ns := env.NewNamespace(t, "sched", nil)
	w := world{ns: ns, flavor: "f-" + ns, cohort: "c-" + ns}
	env.CreateAll(t, MakeResourceFlavor(w.flavor).NodeLabel("pool", "gpu").QuotaOnly().Obj())
	return w
}

// queue creates a ClusterQueue with a GPU quota in the world's cohort and
// a LocalQueue of the same name feeding it.
func (w world) queue(t *testing.T, name, nominal string, mutate ...func(*musterv1beta1.ClusterQueue)) string {
	cq := MakeClusterQueue(name + "-" + w.ns).Cohort(w.cohort).
		ResourceGroup(MakeFlavorQuotas(w.flavor).Resource(gpu, nominal).Obj()).Obj()
	for _, m := range mutate {
		m(cq)
	}
	env.CreateAll(t, cq, MakeLocalQueue(name, w.ns).ClusterQueue(cq.Name).Obj())
	return cq.Name
}

func (w world) job(name, queue string, gpus string, priority ...string) *batchv1.Job {
	b := MakeJob(name, w.ns).Queue(queue).Request(gpu, gpus)
	if len(priority) > 0 {
		b.Label(musterv1beta1.WorkloadPriorityClassLabel, priority[0])
	}
	return b.Obj()
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		NewWithT(t).Expect(env.Client.Create(context.Background(), o)).To(Succeed())
	}
}

// nearHead is how deep in its queues a pending workload gets its reason
// written (the scheduler's describedDepth).
const nearHead = 10

// expectQueuedUndescribed waits until the job is suspended and queued, and
// checks that no pending reason was written to its Workload: it is deeper
// in its queues than nearHead.
func expectQueuedUndescribed(t *testing.T, j *batchv1.Job) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		g.Expect(framework.IsSuspended(env.GetJob(g, j))).To(BeTrue())
		wl := env.WorkloadOfJob(g, j)
		g.Expect(wl.Status.Admission).To(BeNil())
	}, framework.Timeout, framework.Interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)).To(BeNil())
	}, 2*time.Second, framework.Interval).Should(Succeed())
}

func running(t *testing.T, jobs ...*batchv1.Job) {
	t.Helper()
	for _, j := range jobs {
		env.ExpectJobRunning(t, j, map[string]string{"pool": "gpu"})
	}
}

// expectPreempted waits until the job's workload was preempted for the
// reason, its job suspended and requeued.
func expectPreempted(t *testing.T, j *batchv1.Job, reason string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(framework.IsSuspended(env.GetJob(g, j))).To(BeTrue())
		wl := env.WorkloadOfJob(g, j)
		c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadPreempted)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(reason))
		g.Expect(meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadRequeued)).To(BeTrue())
		g.Expect(wl.Status.Admission).To(BeNil())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

func runningCount(g Gomega, jobs []*batchv1.Job) int {
	n := 0
	for _, j := range jobs {
		if !framework.IsSuspended(env.GetJob(g, j)) {
			n++
		}
	}
	return n
}

func clusterQueue(g Gomega, name string) *musterv1beta1.ClusterQueue {
	var cq musterv1beta1.ClusterQueue
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &cq)).To(Succeed())
	return &cq
}
