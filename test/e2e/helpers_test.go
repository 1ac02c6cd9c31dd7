//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// namespace creates a namespace for one test and deletes it afterwards.
// namespace is a fresh namespace for one test; when the test fails, its
// Workloads' conditions are logged first (what Muster decided for each:
// the suite restarts Muster, so its log may no longer hold it).
func namespace(t *testing.T) string {
	ns := framework.NewNamespace(t, c, "e2e", nil)
	t.Cleanup(func() {
		if t.Failed() {
			logWorkloads(t, ns)
		}
	})
	return ns
}

func logWorkloads(t *testing.T, ns string) {
	var wls musterv1beta1.WorkloadList
	if err := c.List(context.Background(), &wls, client.InNamespace(ns)); err != nil {
		t.Logf("listing the Workloads of %s: %v", ns, err)
		return
	}
	for _, wl := range wls.Items {
		for _, cond := range wl.Status.Conditions {
			t.Logf("workload %s: %s=%s %s: %s (%s)", wl.Name, cond.Type, cond.Status, cond.Reason, cond.Message, cond.LastTransitionTime.UTC().Format(time.RFC3339))
		}
	}
}

func createAll(t *testing.T, objs ...client.Object) {
	t.Helper()
	framework.CreateAll(t, c, objs...)
}

// queues creates flavors for the a100 and h100 nodes and one ClusterQueue
// with the given GPU quotas, fed by LocalQueue "main" in ns.
func queues(t *testing.T, ns string, a100, h100 string, mutate ...func(*musterv1beta1.ClusterQueue)) string {
	cq := MakeClusterQueue("cq-"+ns).ResourceGroup(
		MakeFlavorQuotas("a100-"+ns).Resource("cpu", "64").Resource(gpu, a100).Obj(),
		MakeFlavorQuotas("h100-"+ns).Resource("cpu", "32").Resource(gpu, h100).Obj()).Obj()
	for _, m := range mutate {
		m(cq)
	}
	createAll(t,
		MakeResourceFlavor("a100-"+ns).NodeLabel("muster.dev/gpu", "a100").Obj(),
		MakeResourceFlavor("h100-"+ns).NodeLabel("muster.dev/gpu", "h100").Obj(),
		cq, MakeLocalQueue("main", ns).ClusterQueue(cq.Name).Obj())
	return cq.Name
}

// gpuJob is a Job of pods workers of 1 GPU each; runtime "" runs forever.
func gpuJob(ns, name, queue string, pods int32, runtime string) *batchv1.Job {
	b := MakeJob(name, ns).Parallelism(pods).Request(gpu, "1").Request("cpu", "1")
	if queue != "" {
		b.Queue(queue)
	}
	j := b.Obj()
	j.Spec.BackoffLimit = ptr.To[int32](0)
	if runtime != "" {
		j.Spec.Template.Annotations = map[string]string{"muster.dev/runtime": runtime}
	}
	return j
}

// podsOf counts a job's pods by phase and returns the nodes of bound,
// non-terminal pods.
func podsOf(g Gomega, ns, job string) (bound, pending, succeeded int, nodes []string) {
	var pods corev1.PodList
	g.Expect(c.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{"job-name": job})).To(Succeed())
	for _, p := range pods.Items {
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			succeeded++
		case p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil:
		case p.Spec.NodeName != "":
			bound++
			nodes = append(nodes, p.Spec.NodeName)
		default:
			pending++
		}
	}
	return
}

func jobSucceeded(g Gomega, ns, name string) bool {
	var j batchv1.Job
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &j)).To(Succeed())
	for _, cond := range j.Status.Conditions {
		if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func nodeLabel(g Gomega, node, key string) string {
	var n corev1.Node
	g.Expect(c.Get(context.Background(), client.ObjectKey{Name: node}, &n)).To(Succeed())
	return n.Labels[key]
}

// restartMuster restarts the manager process of the local cluster.
func restartMuster(t *testing.T) {
	t.Helper()
	out, err := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "cluster.sh"), "muster").CombinedOutput()
	if err != nil {
		t.Fatalf("restarting Muster: %v\n%s", err, out)
	}
}

const timeout = 2 * time.Minute

func sampleEvery(d time.Duration, stop <-chan struct{}, f func()) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(d):
			f()
		}
	}
}

var _ = fmt.Sprint
