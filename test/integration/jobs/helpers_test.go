package jobs

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// testQueues is a flavor, a ClusterQueue and a LocalQueue of one test, in a
// namespace of its own.
type testQueues struct {
	ns, flavor, cq, lq string
}

// setupQueues creates a namespace and a flavor a100-<ns> with a GPU quota in
// a ClusterQueue and a LocalQueue feeding it.
func setupQueues(t *testing.T, gpuQuota string) testQueues {
	t.Helper()
	q := env.NewGPUQueue(t, "test", "a100", gpuQuota)
	return testQueues{ns: q.Namespace, flavor: q.Flavor, cq: q.ClusterQueue, lq: q.LocalQueue}
}

// gpuJob is a Job of n pods of perPod GPUs each in the test's queue.
func (q testQueues) gpuJob(name string, pods int32, perPod string) *batchv1.Job {
	return MakeJob(name, q.ns).Queue(q.lq).Parallelism(pods).Request(gpu, perPod).Obj()
}

func getJob(g Gomega, j *batchv1.Job) *batchv1.Job                { return env.GetJob(g, j) }
func workloadOf(g Gomega, j *batchv1.Job) *musterv1beta1.Workload { return env.WorkloadOfJob(g, j) }
func isSuspended(j *batchv1.Job) bool                             { return framework.IsSuspended(j) }
func expectRunning(t *testing.T, j *batchv1.Job) {
	t.Helper()
	env.ExpectJobRunning(t, j, map[string]string{"gpu": "a100"})
}
func expectPending(t *testing.T, j *batchv1.Job, want string) {
	t.Helper()
	env.ExpectJobPending(t, j, want)
}
func complete(t *testing.T, j *batchv1.Job) { t.Helper(); env.CompleteJob(t, j) }
func markComplete(ctx context.Context, j *batchv1.Job) error {
	return env.MarkJobComplete(ctx, j)
}
func consistently(t *testing.T, f func(g Gomega))  { t.Helper(); framework.HoldsFor(t, f) }
func eventsFor(g Gomega, ns, name string) []string { return env.EventReasons(g, ns, name) }
