// Package metrics defines Muster's Prometheus metrics, registered on
// controller-runtime's registry so they are served on the manager's
// metrics endpoint. Names and labels are Kueue's (pkg/metrics, v0.19) under
// muster_ instead of kueue_: a Kueue user's dashboards and alerts port by
// renaming the prefix. Kueue's replica_role label is left out (only the
// leader reports queue metrics here).
package metrics

import (
	"regexp"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label values of the pending gauges' status and the attempts' result.
const (
	StatusActive       = "active"
	StatusInadmissible = "inadmissible"
	ResultSuccess      = "success"
	ResultInadmissible = "inadmissible"
)

// waitBuckets span 50 ms to ~27 hours.
var waitBuckets = prometheus.ExponentialBuckets(0.05, 2, 22)

func gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func histogram(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
}

// The scheduler's cycles.
var (
	AdmissionAttempts = counter("muster_admission_attempts_total",
		"Scheduling cycles, by result: success when the cycle admitted a workload, inadmissible otherwise.", "result")
	AdmissionAttemptDuration = histogram("muster_admission_attempt_duration_seconds",
		"Duration of a scheduling cycle, by result.", prometheus.ExponentialBuckets(0.0005, 2, 16), "result")
)

// Workloads of a ClusterQueue.
var (
	PendingWorkloads = gauge("muster_pending_workloads",
		"Pending workloads per ClusterQueue, by status: active (to be tried) or inadmissible (tried, waiting for quota to free).",
		"cluster_queue", "status")
	ReservingActiveWorkloads = gauge("muster_reserving_active_workloads",
		"Workloads holding quota, per ClusterQueue.", "cluster_queue")
	AdmittedActiveWorkloads = gauge("muster_admitted_active_workloads",
		"Admitted workloads that are not finished, per ClusterQueue.", "cluster_queue")
	QuotaReservedWorkloadsTotal = counter("muster_quota_reserved_workloads_total",
		"Workloads that got quota, per ClusterQueue and priority class.", "cluster_queue", "priority_class")
	AdmittedWorkloadsTotal = counter("muster_admitted_workloads_total",
		"Workloads admitted, per ClusterQueue and priority class.", "cluster_queue", "priority_class")
	QuotaReservedWaitTime = histogram("muster_quota_reserved_wait_time_seconds",
		"Time from a workload's creation (or last requeue) to its quota reservation.", waitBuckets, "cluster_queue", "priority_class")
	AdmissionWaitTime = histogram("muster_admission_wait_time_seconds",
		"Time from a workload's creation (or last requeue) to its admission.", waitBuckets, "cluster_queue", "priority_class")
	ReadyWaitTime = histogram("muster_ready_wait_time_seconds",
		"Time from a workload's admission to all its pods ready (with waitForPodsReady).", waitBuckets, "cluster_queue", "priority_class")
	EvictedWorkloadsTotal = counter("muster_evicted_workloads_total",
		"Workloads evicted, per ClusterQueue, reason, underlying cause and priority class.",
		"cluster_queue", "reason", "underlying_cause", "priority_class")
	PreemptedWorkloadsTotal = counter("muster_preempted_workloads_total",
		"Workloads preempted, per preempting ClusterQueue and reason (InClusterQueue, InCohortReclamation, ...).",
		"preempting_cluster_queue", "reason")
	OldestPendingWorkload = gauge("muster_oldest_pending_workload_timestamp_seconds",
		"Creation time (Unix seconds) of the ClusterQueue's oldest pending workload, 0 if none; not in Kueue. time() minus it is how long the oldest has waited, without the gauge needing updates.", "cluster_queue")
	ClusterQueueStatus = gauge("muster_cluster_queue_status",
		"1 for the ClusterQueue's status (pending, active or terminating), 0 for the others.", "cluster_queue", "status")
)

// Quota of a ClusterQueue, in the resource's base unit (cores, bytes,
// devices).
var (
	ClusterQueueResourceReservation = gauge("muster_cluster_queue_resource_reservation",
		"Quota reserved by workloads, per ClusterQueue, flavor and resource.", "cohort", "cluster_queue", "flavor", "resource")
	ClusterQueueResourceUsage = gauge("muster_cluster_queue_resource_usage",
		"Quota used by admitted workloads, per ClusterQueue, flavor and resource.", "cohort", "cluster_queue", "flavor", "resource")
	ClusterQueueNominalQuota = gauge("muster_cluster_queue_nominal_quota",
		"Nominal quota, per ClusterQueue, flavor and resource.", "cohort", "cluster_queue", "flavor", "resource")
	ClusterQueueBorrowingLimit = gauge("muster_cluster_queue_borrowing_limit",
		"Borrowing limit, per ClusterQueue, flavor and resource (absent: unlimited).", "cohort", "cluster_queue", "flavor", "resource")
	ClusterQueueLendingLimit = gauge("muster_cluster_queue_lending_limit",
		"Lending limit, per ClusterQueue, flavor and resource (absent: all of it).", "cohort", "cluster_queue", "flavor", "resource")
	ClusterQueueWeightedShare = gauge("muster_cluster_queue_weighted_share",
		"The ClusterQueue's weighted share under fair sharing (0: borrows nothing).", "cluster_queue", "cohort")
	CohortWeightedShare = gauge("muster_cohort_weighted_share",
		"The cohort's weighted share within its parent under fair sharing.", "cohort")
)

// Workloads of a LocalQueue.
var (
	LocalQueuePendingWorkloads = gauge("muster_local_queue_pending_workloads",
		"Pending workloads per LocalQueue.", "name", "namespace", "status")
	LocalQueueReservingActiveWorkloads = gauge("muster_local_queue_reserving_active_workloads",
		"Workloads holding quota, per LocalQueue.", "name", "namespace")
	LocalQueueAdmittedActiveWorkloads = gauge("muster_local_queue_admitted_active_workloads",
		"Admitted workloads that are not finished, per LocalQueue.", "name", "namespace")
	LocalQueueQuotaReservedWorkloadsTotal = counter("muster_local_queue_quota_reserved_workloads_total",
		"Workloads that got quota, per LocalQueue and priority class.", "name", "namespace", "priority_class")
	LocalQueueAdmittedWorkloadsTotal = counter("muster_local_queue_admitted_workloads_total",
		"Workloads admitted, per LocalQueue and priority class.", "name", "namespace", "priority_class")
	LocalQueueAdmissionWaitTime = histogram("muster_local_queue_admission_wait_time_seconds",
		"Time from a workload's creation (or last requeue) to its admission, per LocalQueue.", waitBuckets, "name", "namespace", "priority_class")
	LocalQueueEvictedWorkloadsTotal = counter("muster_local_queue_evicted_workloads_total",
		"Workloads evicted, per LocalQueue, reason, underlying cause and priority class.",
		"name", "namespace", "reason", "underlying_cause", "priority_class")
	LocalQueueStatus = gauge("muster_local_queue_status",
		"1 for the LocalQueue's Active condition status (True, False or Unknown), 0 for the others.", "name", "namespace", "active")
)

// BuildInfo is 1, labelled with the build.
var BuildInfo = gauge("muster_build_info", "Muster's build.", "git_version", "git_commit", "build_date", "go_version", "compiler", "platform")

// all are every metric of this package.
var all = []prometheus.Collector{
	AdmissionAttempts, AdmissionAttemptDuration,
	PendingWorkloads, ReservingActiveWorkloads, AdmittedActiveWorkloads,
	QuotaReservedWorkloadsTotal, AdmittedWorkloadsTotal, QuotaReservedWaitTime, AdmissionWaitTime, ReadyWaitTime,
	EvictedWorkloadsTotal, PreemptedWorkloadsTotal, OldestPendingWorkload, ClusterQueueStatus,
	ClusterQueueResourceReservation, ClusterQueueResourceUsage, ClusterQueueNominalQuota,
	ClusterQueueBorrowingLimit, ClusterQueueLendingLimit, ClusterQueueWeightedShare, CohortWeightedShare,
	LocalQueuePendingWorkloads, LocalQueueReservingActiveWorkloads, LocalQueueAdmittedActiveWorkloads,
	LocalQueueQuotaReservedWorkloadsTotal, LocalQueueAdmittedWorkloadsTotal, LocalQueueAdmissionWaitTime,
	LocalQueueEvictedWorkloadsTotal, LocalQueueStatus,
	BuildInfo,
}

func init() {
	metrics.Registry.MustRegister(all...)
	SetBuildInfo()
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// Names are the names of every metric of this package (dashboards and
// alerts are checked against them).
func Names() []string {
	var out []string
	for _, c := range all {
		ch := make(chan *prometheus.Desc, 4)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			if m := fqName.FindStringSubmatch(d.String()); m != nil {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// SetBuildInfo sets muster_build_info from what the Go toolchain stamped
// into the binary (module version, VCS revision and time).
func SetBuildInfo() {
	version, commit, date := "unknown", "unknown", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				date = s.Value
			}
		}
	}
	BuildInfo.Reset()
	BuildInfo.WithLabelValues(version, commit, date, runtime.Version(), runtime.Compiler, runtime.GOOS+"/"+runtime.GOARCH).Set(1)
}

// Workload names a workload's queues and priority class for the counters.
type Workload struct {
	ClusterQueue, Namespace, LocalQueue, PriorityClass string
}

// ReportAdmission counts an admission (quota reserved and admitted in one
// write) waited for seconds.
func ReportAdmission(w Workload, seconds float64) {
	QuotaReservedWorkloadsTotal.WithLabelValues(w.ClusterQueue, w.PriorityClass).Inc()
	AdmittedWorkloadsTotal.WithLabelValues(w.ClusterQueue, w.PriorityClass).Inc()
	QuotaReservedWaitTime.WithLabelValues(w.ClusterQueue, w.PriorityClass).Observe(seconds)
	AdmissionWaitTime.WithLabelValues(w.ClusterQueue, w.PriorityClass).Observe(seconds)
	LocalQueueQuotaReservedWorkloadsTotal.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass).Inc()
	LocalQueueAdmittedWorkloadsTotal.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass).Inc()
	LocalQueueAdmissionWaitTime.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass).Observe(seconds)
}

// ReportEviction counts one eviction written to an admitted workload. Every
// writer of the Evicted condition calls it once the write succeeded, so
// the counter sees every reason, not just the scheduler's. cause is the
// detail under the reason (the preemption reason of a Preempted one).
func ReportEviction(w Workload, reason, cause string) {
	EvictedWorkloadsTotal.WithLabelValues(w.ClusterQueue, reason, cause, w.PriorityClass).Inc()
	LocalQueueEvictedWorkloadsTotal.WithLabelValues(w.LocalQueue, w.Namespace, reason, cause, w.PriorityClass).Inc()
}

// ReportCycle counts a scheduling cycle and its duration.
func ReportCycle(admitted bool, seconds float64) {
	result := ResultInadmissible
	if admitted {
		result = ResultSuccess
	}
	AdmissionAttempts.WithLabelValues(result).Inc()
	AdmissionAttemptDuration.WithLabelValues(result).Observe(seconds)
}

// clusterQueueGauges are the gauges with a cluster_queue label.
var clusterQueueGauges = []*prometheus.GaugeVec{
	PendingWorkloads, ReservingActiveWorkloads, AdmittedActiveWorkloads, OldestPendingWorkload, ClusterQueueStatus,
	ClusterQueueResourceReservation, ClusterQueueResourceUsage, ClusterQueueNominalQuota,
	ClusterQueueBorrowingLimit, ClusterQueueLendingLimit, ClusterQueueWeightedShare,
}

// ForgetClusterQueue drops every gauge series of a deleted ClusterQueue.
func ForgetClusterQueue(name string) {
	for _, v := range clusterQueueGauges {
		v.DeletePartialMatch(prometheus.Labels{"cluster_queue": name})
	}
}

// ForgetLocalQueue drops every gauge series of a deleted LocalQueue.
func ForgetLocalQueue(namespace, name string) {
	for _, v := range []*prometheus.GaugeVec{LocalQueuePendingWorkloads, LocalQueueReservingActiveWorkloads, LocalQueueAdmittedActiveWorkloads, LocalQueueStatus} {
		v.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "name": name})
	}
}

// SetOneOf sets the series of value to 1 and the other values' to 0, for
// the status gauges.
func SetOneOf(g *prometheus.GaugeVec, labels prometheus.Labels, key, value string, all ...string) {
	for _, v := range all {
		l := prometheus.Labels{key: v}
		for k, lv := range labels {
			l[k] = lv
		}
		n := 0.0
		if v == value {
			n = 1
		}
		g.With(l).Set(n)
	}
}
