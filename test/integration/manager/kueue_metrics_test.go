package manager

import (
	"context"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// TestMetricsHaveKueuesNamesAndLabels scrapes /metrics with one Job
// admitted and one waiting, and finds the series a Kueue dashboard reads,
// under muster_ with Kueue's labels (docs/metrics.md).
func TestMetricsHaveKueuesNamesAndLabels(t *testing.T) {
	g := NewWithT(t)
	addr := freeAddr(t)
	env.StartManager(t, func(c *configv1beta1.Configuration) {
		c.Metrics.BindAddress = addr
		c.Metrics.SecureServing = ptr.To(false)
	})
	q := env.NewGPUQueue(t, "kmetrics", "a100", "4")
	running := MakeJob("running", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "4").Obj()
	waiting := MakeJob("waiting", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "2").Obj()
	g.Expect(env.Client.Create(context.Background(), running)).To(Succeed())
	env.ExpectJobRunning(t, running, nil)
	g.Expect(env.Client.Create(context.Background(), waiting)).To(Succeed())
	env.ExpectJobPending(t, waiting, "insufficient quota")

	cq, ns, flavor := `cluster_queue="`+q.ClusterQueue+`"`, `namespace="`+q.Namespace+`"`, `flavor="`+q.Flavor+`"`
	want := []string{
		`muster_pending_workloads{` + cq + `,status="inadmissible"} 1`,
		`muster_pending_workloads{` + cq + `,status="active"} 0`,
		`muster_reserving_active_workloads{` + cq + `} 1`,
		`muster_admitted_active_workloads{` + cq + `} 1`,
		`muster_quota_reserved_workloads_total{` + cq + `,priority_class=""} 1`,
		`muster_admitted_workloads_total{` + cq + `,priority_class=""} 1`,
		`muster_admission_wait_time_seconds_count{` + cq + `,priority_class=""} 1`,
		`muster_quota_reserved_wait_time_seconds_count{` + cq + `,priority_class=""} 1`,
		`muster_cluster_queue_status{` + cq + `,status="active"} 1`,
		`muster_cluster_queue_status{` + cq + `,status="pending"} 0`,
		`muster_cluster_queue_nominal_quota{` + cq + `,cohort="",` + flavor + `,resource="nvidia.com/gpu"} 4`,
		`muster_cluster_queue_resource_usage{` + cq + `,cohort="",` + flavor + `,resource="nvidia.com/gpu"} 4`,
		`muster_cluster_queue_resource_reservation{` + cq + `,cohort="",` + flavor + `,resource="nvidia.com/gpu"} 4`,
		`muster_local_queue_pending_workloads{name="main",` + ns + `,status="inadmissible"} 1`,
		`muster_local_queue_admitted_active_workloads{name="main",` + ns + `} 1`,
		`muster_local_queue_admitted_workloads_total{name="main",` + ns + `,priority_class=""} 1`,
		`muster_local_queue_status{active="True",name="main",` + ns + `} 1`,
		`muster_admission_attempts_total{result="success"}`,
		`muster_admission_attempt_duration_seconds_bucket{result="inadmissible"`,
		`muster_build_info{`,
		`workqueue_depth{controller="workload",name="workload"`,
	}
	g.Eventually(func(g Gomega) {
		code, body, err := scrape("http://"+addr+"/metrics", "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK))
		for _, w := range want {
			g.Expect(body).To(ContainSubstring(w))
		}
	}, framework.Timeout, framework.Interval).Should(Succeed())
}
