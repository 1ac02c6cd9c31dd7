package metrics

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// workloadAt is an admitted workload of cq created at t0, its conditions
// as given.
func workloadAt(cq string, conds ...metav1.Condition) *musterv1beta1.Workload {
	wl := &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns-" + cq, CreationTimestamp: metav1.NewTime(t0)}}
	wl.Spec.QueueName = "main"
	wl.Status.Admission = &musterv1beta1.Admission{ClusterQueue: musterv1beta1.ClusterQueueReference(cq)}
	wl.Status.Conditions = conds
	return wl
}

func cond(typ string, status metav1.ConditionStatus, at time.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: "R", LastTransitionTime: metav1.NewTime(at)}
}

// sum is the sum of the observations of a histogram's series.
func sum(t *testing.T, h *prometheus.HistogramVec, labels ...string) float64 {
	t.Helper()
	var m dto.Metric
	if err := h.WithLabelValues(labels...).(prometheus.Histogram).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleSum()
}

// Kueue's ready_wait_time_seconds runs from creation or the last requeue,
// admitted_until_ready_wait_time_seconds from the admission: a workload
// requeued at +10 min, admitted at +15 and ready at +16 waited 6 and 1.
func TestReadyWaitTimesAreKueues(t *testing.T) {
	g := NewWithT(t)
	wl := workloadAt("ready",
		cond(musterv1beta1.WorkloadRequeued, metav1.ConditionTrue, t0.Add(10*time.Minute)),
		cond(musterv1beta1.WorkloadAdmitted, metav1.ConditionTrue, t0.Add(15*time.Minute)))
	ReportReady(wl, t0.Add(16*time.Minute))
	g.Expect(sum(t, ReadyWaitTime, "ready", "")).To(Equal(360.0))
	g.Expect(sum(t, AdmittedUntilReadyWaitTime, "ready", "")).To(Equal(60.0))
	g.Expect(sum(t, LocalQueueReadyWaitTime, "main", "ns-ready", "")).To(Equal(360.0))
	g.Expect(sum(t, LocalQueueAdmittedUntilReadyWaitTime, "main", "ns-ready", "")).To(Equal(60.0))
}

// Without a requeue, the wait runs from the workload's creation.
func TestQueuedAtIsCreationWithoutARequeue(t *testing.T) {
	g := NewWithT(t)
	g.Expect(QueuedAt(workloadAt("fresh"))).To(Equal(t0))
	g.Expect(QueuedAt(workloadAt("again", cond(musterv1beta1.WorkloadRequeued, metav1.ConditionTrue, t0.Add(time.Hour))))).
		To(Equal(t0.Add(time.Hour)))
}

// The buckets are Kueue's: 1 s, then 2.5 s doubling, 14 of them (16 for
// the admission wait).
func TestWaitBucketsAreKueues(t *testing.T) {
	g := NewWithT(t)
	g.Expect(waitBuckets).To(HaveLen(14))
	g.Expect(waitBuckets[:3]).To(Equal([]float64{1, 2.5, 5}))
	g.Expect(waitBuckets[13]).To(Equal(10240.0))
	g.Expect(kueueBuckets(16)[15]).To(Equal(40960.0))
}

// An eviction of a workload whose pods were ready observes how long they
// ran; one whose pods never were ready observes nothing.
func TestPodsReadyToEvicted(t *testing.T) {
	g := NewWithT(t)
	ready := workloadAt("evicted", cond(musterv1beta1.WorkloadPodsReady, metav1.ConditionTrue, t0))
	ReportEviction(ready, musterv1beta1.ReasonPreempted, "InClusterQueue", t0.Add(time.Minute))
	ReportEviction(workloadAt("evicted"), musterv1beta1.ReasonPreempted, "InClusterQueue", t0.Add(time.Minute))
	g.Expect(sum(t, PodsReadyToEvictedTime, "evicted", musterv1beta1.ReasonPreempted, "InClusterQueue")).To(Equal(60.0))
	g.Expect(testutil.ToFloat64(EvictedWorkloadsTotal.WithLabelValues("evicted", musterv1beta1.ReasonPreempted, "InClusterQueue", ""))).To(Equal(2.0))
}

// A deleted ClusterQueue or LocalQueue takes every series with it:
// counters and histograms, not only gauges.
func TestForgetDropsEverySeries(t *testing.T) {
	g := NewWithT(t)
	wl := workloadAt("gone", cond(musterv1beta1.WorkloadAdmitted, metav1.ConditionTrue, t0), cond(musterv1beta1.WorkloadPodsReady, metav1.ConditionTrue, t0))
	ReportAdmission(WorkloadOf(wl), time.Second)
	ReportReady(wl, t0.Add(time.Second))
	ReportEviction(wl, musterv1beta1.ReasonPreempted, "", t0.Add(time.Minute))
	ReportFinished(WorkloadOf(wl))
	PreemptedWorkloadsTotal.WithLabelValues("gone", "InClusterQueue").Inc()
	PendingWorkloads.WithLabelValues("gone", StatusActive).Set(1)
	LocalQueuePendingWorkloads.WithLabelValues("main", "ns-gone", StatusActive).Set(1)

	g.Expect(seriesWith(AdmittedUntilReadyWaitTime, "gone")).To(Equal(1))
	g.Expect(seriesWith(LocalQueueFinishedWorkloadsTotal, "ns-gone")).To(Equal(1))

	ForgetClusterQueue("gone")
	ForgetLocalQueue("ns-gone", "main")
	for _, v := range append(clusterQueueVecs, localQueueVecs...) {
		g.Expect(seriesWith(v, "gone")).To(BeZero())
		g.Expect(seriesWith(v, "ns-gone")).To(BeZero())
	}
	g.Expect(seriesWith(PreemptedWorkloadsTotal, "gone")).To(BeZero())
}

// seriesWith counts the series of c with a label of that value.
func seriesWith(c prometheus.Collector, value string) int {
	ch := make(chan prometheus.Metric, 64)
	go func() { c.Collect(ch); close(ch) }()
	n := 0
	for m := range ch {
		var out dto.Metric
		if err := m.Write(&out); err != nil {
			continue
		}
		for _, l := range out.GetLabel() {
			if l.GetValue() == value {
				n++
				break
			}
		}
	}
	return n
}
