package jobs

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/metrics"
	"github.com/musterhq/muster/test/framework"
)

// TestRestartChangesNothing (P2): a manager restarted with admitted and
// pending work writes nothing: no workload or job changes, no new events,
// the same usage metrics; then it goes on admitting.
func TestRestartChangesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	mgr := env.StartManager(t)
	q := setupQueues(t, "8")
	admitted, pending := q.gpuJob("admitted", 2, "3"), q.gpuJob("pending", 1, "4")
	g.Expect(env.Client.Create(ctx, admitted)).To(Succeed())
	expectRunning(t, admitted)
	g.Expect(env.Client.Create(ctx, pending)).To(Succeed())
	expectPending(t, pending, "4 requested, 2 available")
	usage := func() float64 {
		return testutil.ToFloat64(metrics.ClusterQueueResourceUsage.WithLabelValues("", q.cq, q.flavor, string(gpu)))
	}
	g.Eventually(usage, framework.Timeout, framework.Interval).Should(Equal(6.0))
	// What is checked next is that nothing more is written or emitted, so
	// there is no condition to wait on: give the coalesced status writes
	// and the event broadcaster's flush time to land first.
	time.Sleep(2 * time.Second)

	before := snapshotVersions(g, q.ns)
	eventsBefore := countEvents(g, q.ns)
	metrics.ClusterQueueResourceUsage.Reset()
	mgr = env.Restart(t, mgr)

	g.Eventually(usage, framework.Timeout, framework.Interval).Should(Equal(6.0), "usage metric rebuilt")
	consistently(t, func(g Gomega) {
		g.Expect(snapshotVersions(g, q.ns)).To(Equal(before), "a restart writes no job or workload")
		g.Expect(countEvents(g, q.ns)).To(Equal(eventsBefore), "a restart emits no events")
	})

	complete(t, admitted)
	expectRunning(t, pending)
	_ = mgr
}

// snapshotVersions maps every job and workload of a namespace to its
// resourceVersion.
func snapshotVersions(g Gomega, ns string) map[string]string {
	out := map[string]string{}
	var wls musterv1beta1.WorkloadList
	g.Expect(env.Client.List(context.Background(), &wls, client.InNamespace(ns))).To(Succeed())
	for _, wl := range wls.Items {
		out["workload/"+wl.Name] = wl.ResourceVersion
	}
	var jobs batchv1.JobList
	g.Expect(env.Client.List(context.Background(), &jobs, client.InNamespace(ns))).To(Succeed())
	for _, j := range jobs.Items {
		out["job/"+j.Name] = j.ResourceVersion
	}
	return out
}

func countEvents(g Gomega, ns string) int {
	var list corev1.EventList
	g.Expect(env.Client.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	n := 0
	for _, e := range list.Items {
		n += int(max(e.Count, 1))
	}
	return n
}
