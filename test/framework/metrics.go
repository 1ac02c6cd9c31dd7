package framework

import (
	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/musterhq/muster/controllers/metrics"
)

// Evictions is muster_evicted_workloads_total for a ClusterQueue and
// reason (over every cause and priority class), as the managers of this
// test process counted them. Tests name their ClusterQueues uniquely, so
// the count is theirs alone.
func Evictions(clusterQueue, reason string) float64 {
	ch := make(chan prometheus.Metric, 1024)
	go func() { metrics.EvictedWorkloadsTotal.Collect(ch); close(ch) }()
	total := 0.0
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			continue
		}
		labels := map[string]string{}
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["cluster_queue"] == clusterQueue && labels["reason"] == reason {
			total += pb.GetCounter().GetValue()
		}
	}
	return total
}

// GatherMetrics gathers what the managers of this test process registered
// with controller-runtime's registry (what /metrics serves), by name.
func GatherMetrics(g gomega.Gomega) map[string]*dto.MetricFamily {
	fams, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// MetricLabelValues lists the values a family's metrics have for a label.
func MetricLabelValues(f *dto.MetricFamily, label string) []string {
	var out []string
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out = append(out, l.GetValue())
			}
		}
	}
	return out
}
