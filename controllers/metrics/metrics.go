// Package metrics defines Muster's Prometheus metrics, registered on
// controller-runtime's registry so they are served on the manager's
// metrics endpoint.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// PendingWorkloads is the number of pending workloads per ClusterQueue.
	PendingWorkloads = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "muster_pending_workloads",
		Help: "Workloads waiting for quota, per ClusterQueue.",
	}, []string{"cluster_queue"})

	// ReservingWorkloads is the number of workloads holding quota.
	ReservingWorkloads = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "muster_reserving_workloads",
		Help: "Workloads holding quota, per ClusterQueue.",
	}, []string{"cluster_queue"})

	// AdmissionsTotal counts admissions.
	AdmissionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "muster_admissions_total",
		Help: "Workloads admitted, per ClusterQueue.",
	}, []string{"cluster_queue"})

	// AdmissionWaitTime is the time from a workload's creation to its
	// admission.
	AdmissionWaitTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "muster_admission_wait_time_seconds",
		Help:    "Time from a workload's creation to its admission, per ClusterQueue.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 16),
	}, []string{"cluster_queue"})

	// EvictionsTotal counts evictions by reason: the scheduler's (Preempted,
	// Stopped) and the job reconcilers' (InactiveWorkload, JobChanged,
	// PodsReadyTimeout, RequeuingLimitExceeded). Count with ReportEviction.
	EvictionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "muster_evicted_workloads_total",
		Help: "Workloads evicted, per ClusterQueue and reason.",
	}, []string{"cluster_queue", "reason"})

	// QuotaUsage is the quota reserved per ClusterQueue, flavor and resource,
	// in the resource's base unit (cores, bytes, devices).
	QuotaUsage = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "muster_cluster_queue_resource_usage",
		Help: "Quota reserved by workloads, per ClusterQueue, flavor and resource.",
	}, []string{"cluster_queue", "flavor", "resource"})
)

func init() {
	metrics.Registry.MustRegister(PendingWorkloads, ReservingWorkloads, AdmissionsTotal, AdmissionWaitTime, EvictionsTotal, QuotaUsage)
}

// ReportEviction counts one eviction written to a workload admitted to
// clusterQueue. Every writer of the Evicted condition calls it once the
// write succeeded, so the counter sees every reason, not just the
// scheduler's.
func ReportEviction(clusterQueue, reason string) {
	EvictionsTotal.WithLabelValues(clusterQueue, reason).Inc()
}

// ForgetClusterQueue drops every series of a deleted ClusterQueue.
func ForgetClusterQueue(name string) {
	for _, v := range []*prometheus.GaugeVec{PendingWorkloads, ReservingWorkloads} {
		v.DeleteLabelValues(name)
	}
	QuotaUsage.DeletePartialMatch(prometheus.Labels{"cluster_queue": name})
}
