package manager

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/metrics"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// TestMetricsHaveKueuesNamesAndLabels scrapes /metrics with one Job
// admitted and one waiting, and finds the series a Kueue dashboard reads,
// under muster_ with Kueue's labels (docs/metrics.md).
func TestMetricsHaveKueuesNamesAndLabels(t *testing.T) {
	g := NewWithT(t)
	addr := startWithPlainMetrics(t)
	q := env.NewGPUQueue(t, "kmetrics", "a100", "4")
	running := MakeJob("running", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "4").Obj()
	waiting := MakeJob("waiting", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "2").Obj()
	g.Expect(env.Client.Create(context.Background(), running)).To(Succeed())
	env.ExpectJobRunning(t, running, nil)
	g.Expect(env.Client.Create(context.Background(), waiting)).To(Succeed())
	env.ExpectJobPending(t, waiting, "insufficient quota")

	cq, ns, flavor := "cluster_queue="+q.ClusterQueue, "namespace="+q.Namespace, "flavor="+q.Flavor
	role := "replica_role=" + metrics.RoleStandalone
	gpu := "resource=nvidia.com/gpu"
	want := []series{
		{"muster_pending_workloads", []string{cq, "status=inadmissible", role}, "1"},
		{"muster_pending_workloads", []string{cq, "status=active", role}, "0"},
		{"muster_reserving_active_workloads", []string{cq, role}, "1"},
		{"muster_admitted_active_workloads", []string{cq, role}, "1"},
		{"muster_quota_reserved_workloads_total", []string{cq, "priority_class=", role}, "1"},
		{"muster_admitted_workloads_total", []string{cq, "priority_class=", role}, "1"},
		{"muster_admission_wait_time_seconds_count", []string{cq, "priority_class=", role}, "1"},
		{"muster_quota_reserved_wait_time_seconds_count", []string{cq, "priority_class=", role}, "1"},
		{"muster_admission_checks_wait_time_seconds_count", []string{cq, "priority_class=", role}, "1"},
		{"muster_admission_cycle_preemption_skips", []string{cq, role}, "0"},
		{"muster_cluster_queue_status", []string{cq, "status=active", role}, "1"},
		{"muster_cluster_queue_status", []string{cq, "status=pending", role}, "0"},
		{"muster_cluster_queue_nominal_quota", []string{cq, "cohort=", flavor, gpu, role}, "4"},
		{"muster_cluster_queue_resource_usage", []string{cq, "cohort=", flavor, gpu, role}, "4"},
		{"muster_cluster_queue_resource_reservation", []string{cq, "cohort=", flavor, gpu, role}, "4"},
		{"muster_local_queue_pending_workloads", []string{"name=main", ns, "status=inadmissible", role}, "1"},
		{"muster_local_queue_admitted_active_workloads", []string{"name=main", ns, role}, "1"},
		{"muster_local_queue_admitted_workloads_total", []string{"name=main", ns, "priority_class=", role}, "1"},
		{"muster_local_queue_quota_reserved_wait_time_seconds_count", []string{"name=main", ns, "priority_class=", role}, "1"},
		{"muster_local_queue_status", []string{"active=True", "name=main", ns, role}, "1"},
		{"muster_admission_attempts_total", []string{"result=success", role}, ""},
		{"muster_admission_attempt_duration_seconds_bucket", []string{"result=inadmissible", role}, ""},
		{"muster_build_info", nil, "1"},
		{"workqueue_depth", []string{"controller=workload", "name=workload"}, ""},
	}
	// Kueue's wait-time buckets: 1 s, then 2.5 s doubling.
	buckets := []series{
		{"muster_admission_wait_time_seconds_bucket", []string{cq, "le=1"}, ""},
		{"muster_admission_wait_time_seconds_bucket", []string{cq, "le=2.5"}, ""},
		{"muster_admission_wait_time_seconds_bucket", []string{cq, "le=40960"}, ""},
		{"muster_quota_reserved_wait_time_seconds_bucket", []string{cq, "le=10240"}, ""},
	}
	g.Eventually(func(g Gomega) {
		code, body, err := scrape("http://"+addr+"/metrics", "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK))
		for _, w := range append(want, buckets...) {
			g.Expect(w.in(body)).To(BeTrue(), "no series %s", w)
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// series is a sample to find in a scrape: its name, label=value pairs it
// must have (others may be there too), and its value ("" for any).
type series struct {
	name   string
	labels []string
	value  string
}

func (s series) String() string {
	return fmt.Sprintf("%s{%s} %s", s.name, strings.Join(s.labels, ","), s.value)
}

var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// in reports whether the scrape holds the series.
func (s series) in(body string) bool {
	for _, line := range strings.Split(body, "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok {
			name, rest, ok = strings.Cut(line, " ")
			rest = "} " + rest
		}
		if !ok || name != s.name {
			continue
		}
		labels, value, _ := strings.Cut(rest, "} ")
		have := map[string]bool{}
		for _, m := range labelPair.FindAllStringSubmatch(labels, -1) {
			have[m[1]+"="+m[2]] = true
		}
		if s.value != "" && value != s.value {
			continue
		}
		all := true
		for _, l := range s.labels {
			all = all && have[l]
		}
		if all {
			return true
		}
	}
	return false
}

// TestDeletedQueuesLeaveNoSeries deletes a ClusterQueue and a LocalQueue
// that admitted a job and finds none of their series in the scrape, their
// counters and histograms included (as Kueue clears them).
func TestDeletedQueuesLeaveNoSeries(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	addr := startWithPlainMetrics(t)
	q := env.NewGPUQueue(t, "kmetricsdel", "a100", "4")
	job := MakeJob("done", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "4").Obj()
	g.Expect(env.Client.Create(ctx, job)).To(Succeed())
	env.ExpectJobRunning(t, job, nil)
	admitted := series{"muster_admitted_workloads_total", []string{"cluster_queue=" + q.ClusterQueue}, "1"}
	lqAdmitted := series{"muster_local_queue_admitted_workloads_total", []string{"name=main", "namespace=" + q.Namespace}, "1"}
	g.Eventually(func(g Gomega) {
		_, body, err := scrape("http://"+addr+"/metrics", "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(admitted.in(body) && lqAdmitted.in(body)).To(BeTrue())
	}, framework.Timeout, framework.Interval).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	g.Eventually(func(g Gomega) {
		var wls musterv1beta1.WorkloadList
		g.Expect(env.Client.List(ctx, &wls, client.InNamespace(q.Namespace))).To(Succeed())
		g.Expect(wls.Items).To(BeEmpty())
	}, framework.Timeout, framework.Interval).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, &musterv1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: q.LocalQueue, Namespace: q.Namespace}})).To(Succeed())
	g.Expect(env.Client.Delete(ctx, &musterv1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: q.ClusterQueue}})).To(Succeed())

	g.Eventually(func(g Gomega) {
		_, body, err := scrape("http://"+addr+"/metrics", "")
		g.Expect(err).NotTo(HaveOccurred())
		for _, line := range strings.Split(body, "\n") {
			if !strings.HasPrefix(line, "muster_") {
				continue
			}
			g.Expect(line).NotTo(ContainSubstring(`cluster_queue="` + q.ClusterQueue + `"`))
			g.Expect(line).NotTo(ContainSubstring(`preempting_cluster_queue="` + q.ClusterQueue + `"`))
			g.Expect(line).NotTo(ContainSubstring(`namespace="` + q.Namespace + `"`))
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// startWithPlainMetrics starts a manager serving /metrics over plain HTTP
// and returns its address.
func startWithPlainMetrics(t *testing.T) string {
	t.Helper()
	addr := freeAddr(t)
	env.StartManager(t, func(c *configv1beta1.Configuration) {
		c.Metrics.BindAddress = addr
		c.Metrics.SecureServing = ptr.To(false)
	})
	return addr
}
