//go:build e2e

package multicluster

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const gpu = framework.GPU

func timeAfter() <-chan time.Time { return time.After(100 * time.Millisecond) }

// queues creates, in a namespace of every cluster, a LocalQueue "main": in
// the manager on a ClusterQueue with the dispatch check, in each worker on
// a ClusterQueue of that worker's GPU quota. The workers' flavors check
// node fit: their 2 kwok nodes of 8 GPUs each.
func queues(t *testing.T, ns, managerQuota, quota1, quota2 string) {
	t.Helper()
	for _, c := range []struct {
		c      client.Client
		quota  string
		checks []string
	}{{manager, managerQuota, []string{check}}, {worker1, quota1, nil}, {worker2, quota2, nil}} {
		create(t, c.c, MakeResourceFlavor("f-"+ns).Obj(),
			MakeClusterQueue("cq-"+ns).ResourceGroup(MakeFlavorQuotas("f-"+ns).Resource(gpu, c.quota).Resource("cpu", "1000").Obj()).AdmissionChecks(c.checks...).Obj(),
			MakeLocalQueue("main", ns).ClusterQueue("cq-"+ns).Obj())
	}
}

func create(t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		if o.GetNamespace() == "" {
			t.Cleanup(func() { _ = c.Delete(ctx, o) })
		}
	}
}

// job submits, to the manager, a Job of pods one-GPU pods that run for
// runtime ("" forever), written as for one cluster: the webhook hands it to
// the dispatch.
func job(t *testing.T, ns, name string, pods int32, runtime string) *batchv1.Job {
	t.Helper()
	j := MakeJob(name, ns).Queue("main").Parallelism(pods).Request(gpu, "1").Request("cpu", "1").Obj()
	j.Spec.BackoffLimit = ptr.To[int32](0)
	if runtime != "" {
		j.Spec.Template.Annotations = map[string]string{"muster.dev/runtime": runtime}
	}
	create(t, manager, j)
	return j
}

// managerWorkload is the manager's Workload of a job.
func managerWorkload(g Gomega, j *batchv1.Job) *musterv1beta1.Workload {
	var got batchv1.Job
	g.Expect(manager.Get(context.Background(), client.ObjectKeyFromObject(j), &got)).To(Succeed())
	var wl musterv1beta1.Workload
	key := client.ObjectKey{Namespace: j.Namespace, Name: jobframework.WorkloadName("Job", j.Name, got.UID)}
	g.Expect(manager.Get(context.Background(), key, &wl)).To(Succeed())
	return &wl
}

// remoteJob is a worker's Job of the name; nil if there is none.
func remoteJob(g Gomega, c client.Client, j *batchv1.Job) *batchv1.Job {
	var got batchv1.Job
	err := c.Get(context.Background(), client.ObjectKeyFromObject(j), &got)
	if apierrors.IsNotFound(err) {
		return nil
	}
	g.Expect(err).NotTo(HaveOccurred())
	return &got
}

// runningPods counts a job's bound, running pods in a cluster.
func runningPods(g Gomega, c client.Client, j *batchv1.Job) int {
	var pods corev1.PodList
	g.Expect(c.List(context.Background(), &pods, client.InNamespace(j.Namespace), client.MatchingLabels{batchv1.JobNameLabel: j.Name})).To(Succeed())
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func setQuota(t *testing.T, c client.Client, cq, quota string) {
	t.Helper()
	eventually(t, time.Minute, func(g Gomega) {
		var obj musterv1beta1.ClusterQueue
		g.Expect(c.Get(context.Background(), client.ObjectKey{Name: cq}, &obj)).To(Succeed())
		obj.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = resource.MustParse(quota)
		g.Expect(c.Update(context.Background(), &obj)).To(Succeed())
	})
}

// workers runs hack/multicluster.sh with args.
func workers(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "multicluster.sh"), args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/multicluster.sh %v: %v\n%s", args, err, out)
	}
}

func eventually(t *testing.T, timeout time.Duration, f func(g Gomega)) {
	t.Helper()
	NewWithT(t).Eventually(f, timeout, 250*time.Millisecond).Should(Succeed())
}

func itoa(i int) string { return strconv.Itoa(i) }

func keyOf(o client.Object) client.ObjectKey { return client.ObjectKeyFromObject(o) }
