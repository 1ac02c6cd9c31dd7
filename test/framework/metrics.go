package framework

import (
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/musterhq/muster/controllers/metrics"
)

// Evictions is muster_evicted_workloads_total for a ClusterQueue and
// reason, as the managers of this test process counted them. Tests name
// their ClusterQueues uniquely, so the count is theirs alone.
func Evictions(clusterQueue, reason string) float64 {
	return testutil.ToFloat64(metrics.EvictionsTotal.WithLabelValues(clusterQueue, reason))
}
