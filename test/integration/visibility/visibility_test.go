package visibility

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const base = "/apis/visibility.muster.dev/v1beta1"

// get asks the API server for path, as the user of cfg.
func get(cfg *rest.Config, path string, params map[string]string) (*visibilityv1beta1.PendingWorkloadsSummary, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	req := cs.CoreV1().RESTClient().Get().AbsPath(path)
	for k, v := range params {
		req = req.Param(k, v)
	}
	raw, err := req.DoRaw(context.Background())
	if err != nil {
		return nil, err
	}
	var out visibilityv1beta1.PendingWorkloadsSummary
	return &out, json.Unmarshal(raw, &out)
}

func clusterQueuePath(name string) string {
	return base + "/clusterqueues/" + name + "/pendingworkloads"
}
func localQueuePath(ns, name string) string {
	return base + "/namespaces/" + ns + "/localqueues/" + name + "/pendingworkloads"
}

// TestPositionsAndReasons: three Jobs wait behind one that holds the only
// GPUs; the API lists them in order, with the scheduler's reason, in the
// ClusterQueue and in the LocalQueue, a page at a time.
func TestPositionsAndReasons(t *testing.T) {
	g := NewWithT(t)
	q := env.NewGPUQueue(t, "positions", "a100", "4")
	running := MakeJob("running", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "4").Obj()
	env.CreateAll(t, running)
	env.ExpectJobRunning(t, running, nil)
	var waiting []string
	for _, name := range []string{"first", "second", "third"} {
		j := MakeJob(name, q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "2").Obj()
		env.CreateAll(t, j)
		env.ExpectJobPending(t, j, "insufficient quota")
		var wl string
		g.Eventually(func(g Gomega) { wl = env.WorkloadOfJob(g, j).Name }, framework.Timeout, framework.Interval).Should(Succeed())
		waiting = append(waiting, wl)
	}

	g.Eventually(func(g Gomega) {
		got, err := get(env.Config, clusterQueuePath(q.ClusterQueue), nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Items).To(HaveLen(3))
		for i, it := range got.Items {
			g.Expect(it.Name).To(Equal(waiting[i]))
			g.Expect(it.Namespace).To(Equal(q.Namespace))
			g.Expect(it.LocalQueueName).To(Equal(q.LocalQueue))
			g.Expect(it.PositionInClusterQueue).To(BeEquivalentTo(i))
			g.Expect(it.PositionInLocalQueue).To(BeEquivalentTo(i))
			g.Expect(it.Reason).To(ContainSubstring("insufficient quota"))
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())

	got, err := get(env.Config, localQueuePath(q.Namespace, q.LocalQueue), map[string]string{"offset": "1", "limit": "1"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Items).To(HaveLen(1))
	g.Expect(got.Items[0].Name).To(Equal(waiting[1]))
	g.Expect(got.Items[0].PositionInLocalQueue).To(BeEquivalentTo(1))

	env.CompleteJob(t, running)
	g.Eventually(func(g Gomega) {
		got, err := get(env.Config, clusterQueuePath(q.ClusterQueue), nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Items).To(HaveLen(1), "two of three fit in the freed GPUs")
		g.Expect(got.Items[0].Name).To(Equal(waiting[2]))
		g.Expect(got.Items[0].PositionInClusterQueue).To(BeEquivalentTo(0))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// TestBadRequests: unknown queues are 404, a limit that is not a number is
// 400, both through the API server.
func TestBadRequests(t *testing.T) {
	g := NewWithT(t)
	q := env.NewGPUQueue(t, "bad", "a100", "1")
	_, err := get(env.Config, clusterQueuePath("no-such-queue"), nil)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	_, err = get(env.Config, localQueuePath(q.Namespace, "no-such-queue"), nil)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	_, err = get(env.Config, clusterQueuePath(q.ClusterQueue), map[string]string{"limit": "ten"})
	g.Expect(apierrors.IsBadRequest(err)).To(BeTrue(), "got %v", err)
	got, err := get(env.Config, clusterQueuePath(q.ClusterQueue), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Items).To(BeEmpty())
}

// TestLocalQueueBeforeItsClusterQueue: a Job submitted to a LocalQueue
// whose ClusterQueue does not exist yet is listed in its LocalQueue, at no
// position in any ClusterQueue.
func TestLocalQueueBeforeItsClusterQueue(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t, "early", nil)
	env.CreateAll(t, MakeLocalQueue("main", ns).ClusterQueue("cq-"+ns).Obj())
	j := MakeJob("early", ns).Queue("main").Request(framework.GPU, "1").Obj()
	env.CreateAll(t, j)
	g.Eventually(func(g Gomega) {
		got, err := get(env.Config, localQueuePath(ns, "main"), nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Items).To(HaveLen(1))
		g.Expect(got.Items[0].PositionInClusterQueue).To(BeEquivalentTo(-1))
		g.Expect(got.Items[0].PositionInLocalQueue).To(BeEquivalentTo(0))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// TestAuthorizedByTheAPIServersRBAC: a user sees a LocalQueue's pending
// workloads only with a role that grants localqueues/pendingworkloads in
// its namespace (batch-user), and a ClusterQueue's only with one that
// grants clusterqueues/pendingworkloads (batch-admin).
func TestAuthorizedByTheAPIServersRBAC(t *testing.T) {
	g := NewWithT(t)
	q := env.NewGPUQueue(t, "rbac", "a100", "1")
	roles := env.UserRoles(t)
	// A fresh user per case: the visibility server caches decisions 10 s.
	nobody, err := env.UserConfig("nobody-" + q.Namespace)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = get(nobody, localQueuePath(q.Namespace, q.LocalQueue), nil)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "no role: %v", err)

	user, err := env.UserConfig("user-" + q.Namespace)
	g.Expect(err).NotTo(HaveOccurred())
	env.CreateAll(t, framework.RoleBindingFor(roles.BatchUser, "user-"+q.Namespace, q.Namespace))
	g.Eventually(func() error {
		_, err := get(user, localQueuePath(q.Namespace, q.LocalQueue), nil)
		return err
	}, framework.Timeout, framework.Interval).Should(Succeed())
	_, err = get(user, clusterQueuePath(q.ClusterQueue), nil)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "batch-user sees no ClusterQueue: %v", err)

	admin, err := env.UserConfig("admin-" + q.Namespace)
	g.Expect(err).NotTo(HaveOccurred())
	env.CreateAll(t, framework.ClusterRoleBindingFor(roles.BatchAdmin, "admin-"+q.Namespace))
	g.Eventually(func() error {
		_, err := get(admin, clusterQueuePath(q.ClusterQueue), nil)
		return err
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// TestControllerMetricsSurviveTheAPIServerLibrary: linking k8s.io/apiserver
// brings component-base's workqueue metrics provider, whose init can take
// the place of controller-runtime's; the controllers' queue metrics must
// still be on /metrics.
func TestControllerMetricsSurviveTheAPIServerLibrary(t *testing.T) {
	g := NewWithT(t)
	families := framework.GatherMetrics(g)
	g.Expect(families).To(HaveKey("workqueue_depth"))
	g.Expect(framework.MetricLabelValues(families["workqueue_depth"], "controller")).To(ContainElement("workload"))
}

// explain asks for a workload's explanation, as the user of cfg.
func explain(cfg *rest.Config, ns, name string) (*visibilityv1beta1.WorkloadExplanation, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath(base + "/namespaces/" + ns + "/workloads/" + name + "/explanation").DoRaw(context.Background())
	if err != nil {
		// The core client does not decode another group's Status: read
		// the server's message from the body.
		var status metav1.Status
		if json.Unmarshal(raw, &status) == nil && status.Kind == "Status" {
			return nil, &apierrors.StatusError{ErrStatus: status}
		}
		return nil, err
	}
	var out visibilityv1beta1.WorkloadExplanation
	return &out, json.Unmarshal(raw, &out)
}

// TestExplanationThroughTheAPIServer: behind a Job holding the queue's
// GPUs, a waiting Job's explanation (served through the APIService) says
// it does not fit, what is short, and that its queue never preempts; a
// batch-user of its namespace may read it, a user without a role may not;
// the admitted Job's workload is not pending, and says so.
func TestExplanationThroughTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	q := env.NewGPUQueue(t, "explain", "a100", "4")
	running := MakeJob("running", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "4").Obj()
	env.CreateAll(t, running)
	env.ExpectJobRunning(t, running, nil)
	waiting := MakeJob("waiting", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "2").Obj()
	env.CreateAll(t, waiting)
	env.ExpectJobPending(t, waiting, "insufficient quota")
	var wl, admitted string
	g.Eventually(func(g Gomega) {
		wl, admitted = env.WorkloadOfJob(g, waiting).Name, env.WorkloadOfJob(g, running).Name
	}, framework.Timeout, framework.Interval).Should(Succeed())

	x, err := explain(env.Config, q.Namespace, wl)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(x.ClusterQueue).To(Equal(q.ClusterQueue))
	g.Expect(x.PositionInClusterQueue).To(HaveValue(BeEquivalentTo(0)))
	g.Expect(x.Reason).To(ContainSubstring("insufficient quota for nvidia.com/gpu"))
	g.Expect(x.Fit).To(Equal(visibilityv1beta1.FitNone))
	g.Expect(x.Shortages).To(ContainElement(HaveField("Message", ContainSubstring("2 requested, 0 available (quota 4)"))))
	g.Expect(x.Preemption.State).To(Equal(visibilityv1beta1.PreemptionCannotHelp))
	g.Expect(x.Preemption.Message).To(ContainSubstring("never preempts"))

	_, err = explain(env.Config, q.Namespace, admitted)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("is not pending in Muster's queues"))

	nobody, err := env.UserConfig("nobody-" + q.Namespace)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = explain(nobody, q.Namespace, wl)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "no role: %v", err)
	user, err := env.UserConfig("user-" + q.Namespace)
	g.Expect(err).NotTo(HaveOccurred())
	env.CreateAll(t, framework.RoleBindingFor(env.UserRoles(t).BatchUser, "user-"+q.Namespace, q.Namespace))
	g.Eventually(func() error {
		_, err := explain(user, q.Namespace, wl)
		return err
	}, framework.Timeout, framework.Interval).Should(Succeed())
}
