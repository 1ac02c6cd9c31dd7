// Package metrics defines Muster's Prometheus metrics, registered on
// controller-runtime's registry so they are served on the manager's
// metrics endpoint. Names, labels, buckets and what each measures are
// Kueue's (pkg/metrics) under muster_ instead of kueue_: a Kueue user's
// dashboards and alerts read right after renaming the prefix. Only the
// leader reports queue metrics, so replica_role is leader (or standalone
// without leader election).
package metrics

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
)

// Label values of the pending gauges' status and the attempts' result.
const (
	StatusActive       = "active"
	StatusInadmissible = "inadmissible"
	ResultSuccess      = "success"
	ResultInadmissible = "inadmissible"
)

// Replica roles, the replica_role label's values.
const (
	RoleLeader     = "leader"
	RoleStandalone = "standalone"
)

// kueueBuckets are Kueue's wait-time buckets: 1 s, then 2.5 s doubling
// (n buckets; 14 reach 2.8 hours, 16 reach 11.4).
func kueueBuckets(n int) []float64 {
	return append([]float64{1}, prometheus.ExponentialBuckets(2.5, 2, n-1)...)
}

var waitBuckets = kueueBuckets(14)

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
		"Duration of a scheduling cycle, by result.", prometheus.DefBuckets, "result")
	AdmissionCyclePreemptionSkips = gauge("muster_admission_cycle_preemption_skips",
		"Workloads of the ClusterQueue that could preempt but were skipped in the latest cycle because another ClusterQueue's preemption in it takes back the same resources.", "cluster_queue")
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
	FinishedWorkloadsTotal = counter("muster_finished_workloads_total",
		"Workloads finished, per ClusterQueue and priority class.", "cluster_queue", "priority_class")
	QuotaReservedWaitTime = histogram("muster_quota_reserved_wait_time_seconds",
		"Time from a workload's creation or last requeue to its quota reservation.", waitBuckets, "cluster_queue", "priority_class")
	AdmissionWaitTime = histogram("muster_admission_wait_time_seconds",
		"Time from a workload's creation or last requeue to its admission.", kueueBuckets(16), "cluster_queue", "priority_class")
	AdmissionChecksWaitTime = histogram("muster_admission_checks_wait_time_seconds",
		"Time from a workload's quota reservation to its admission: its admission checks (0 without checks: Muster reserves and admits in one write).", waitBuckets, "cluster_queue", "priority_class")
	ReadyWaitTime = histogram("muster_ready_wait_time_seconds",
		"Time from a workload's creation or last requeue to all its pods ready (with waitForPodsReady).", waitBuckets, "cluster_queue", "priority_class")
	AdmittedUntilReadyWaitTime = histogram("muster_admitted_until_ready_wait_time_seconds",
		"Time from a workload's admission to all its pods ready (with waitForPodsReady).", waitBuckets, "cluster_queue", "priority_class")
	PodsReadyToEvictedTime = histogram("muster_pods_ready_to_evicted_time_seconds",
		"Time from a workload's pods all ready to its eviction, per ClusterQueue, reason and underlying cause.", waitBuckets,
		"cluster_queue", "reason", "underlying_cause")
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
	LocalQueueFinishedWorkloadsTotal = counter("muster_local_queue_finished_workloads_total",
		"Workloads finished, per LocalQueue and priority class.", "name", "namespace", "priority_class")
	LocalQueueQuotaReservedWaitTime = histogram("muster_local_queue_quota_reserved_wait_time_seconds",
		"Time from a workload's creation or last requeue to its quota reservation, per LocalQueue.", waitBuckets, "name", "namespace", "priority_class")
	LocalQueueAdmissionWaitTime = histogram("muster_local_queue_admission_wait_time_seconds",
		"Time from a workload's creation or last requeue to its admission, per LocalQueue.", waitBuckets, "name", "namespace", "priority_class")
	LocalQueueAdmissionChecksWaitTime = histogram("muster_local_queue_admission_checks_wait_time_seconds",
		"Time from a workload's quota reservation to its admission, per LocalQueue (0 without admission checks).", waitBuckets, "name", "namespace", "priority_class")
	LocalQueueReadyWaitTime = histogram("muster_local_queue_ready_wait_time_seconds",
		"Time from a workload's creation or last requeue to all its pods ready, per LocalQueue.", waitBuckets, "name", "namespace", "priority_class")
	LocalQueueAdmittedUntilReadyWaitTime = histogram("muster_local_queue_admitted_until_ready_wait_time_seconds",
		"Time from a workload's admission to all its pods ready, per LocalQueue.", waitBuckets, "name", "namespace", "priority_class")
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
	AdmissionAttempts, AdmissionAttemptDuration, AdmissionCyclePreemptionSkips,
	PendingWorkloads, ReservingActiveWorkloads, AdmittedActiveWorkloads,
	QuotaReservedWorkloadsTotal, AdmittedWorkloadsTotal, FinishedWorkloadsTotal,
	QuotaReservedWaitTime, AdmissionWaitTime, AdmissionChecksWaitTime, ReadyWaitTime, AdmittedUntilReadyWaitTime,
	EvictedWorkloadsTotal, PreemptedWorkloadsTotal, PodsReadyToEvictedTime, OldestPendingWorkload, ClusterQueueStatus,
	ClusterQueueResourceReservation, ClusterQueueResourceUsage, ClusterQueueNominalQuota,
	ClusterQueueBorrowingLimit, ClusterQueueLendingLimit, ClusterQueueWeightedShare, CohortWeightedShare,
	LocalQueuePendingWorkloads, LocalQueueReservingActiveWorkloads, LocalQueueAdmittedActiveWorkloads,
	LocalQueueQuotaReservedWorkloadsTotal, LocalQueueAdmittedWorkloadsTotal, LocalQueueFinishedWorkloadsTotal,
	LocalQueueQuotaReservedWaitTime, LocalQueueAdmissionWaitTime, LocalQueueAdmissionChecksWaitTime,
	LocalQueueReadyWaitTime, LocalQueueAdmittedUntilReadyWaitTime,
	LocalQueueEvictedWorkloadsTotal, LocalQueueStatus,
}

var registerOnce sync.Once

// Register registers every metric on controller-runtime's registry, each
// series labelled replica_role (RoleLeader, or RoleStandalone without
// leader election), as Kueue's are. The first call's role holds for the
// process; muster_build_info has no role, as in Kueue.
func Register(role string) {
	registerOnce.Do(func() {
		prometheus.WrapRegistererWith(prometheus.Labels{"replica_role": role}, metrics.Registry).MustRegister(all...)
		metrics.Registry.MustRegister(BuildInfo)
		SetBuildInfo()
	})
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// Names are the names of every metric of this package (dashboards and
// alerts are checked against them).
func Names() []string {
	var out []string
	for _, c := range append(all, BuildInfo) {
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

// WorkloadOf names wl's queues: the ClusterQueue of its admission.
func WorkloadOf(wl *musterv1beta1.Workload) Workload {
	w := Workload{Namespace: wl.Namespace, LocalQueue: string(wl.Spec.QueueName), PriorityClass: wl.Spec.PriorityClassName}
	if wl.Status.Admission != nil {
		w.ClusterQueue = string(wl.Status.Admission.ClusterQueue)
	}
	return w
}

// QueuedAt is when a workload was created, or last requeued: the start of
// Kueue's wait times (its QueuedWaitTime).
func QueuedAt(wl *musterv1beta1.Workload) time.Time {
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadRequeued); c != nil {
		return c.LastTransitionTime.Time
	}
	return wl.CreationTimestamp.Time
}

// ReportAdmission counts an admission (quota reserved and admitted in one
// write) of a workload queued for waited.
func ReportAdmission(w Workload, waited time.Duration) {
	ReportQuotaReserved(w, waited)
	ReportAdmitted(w, waited, 0)
}

// ReportQuotaReserved counts a workload's quota reservation, waited after
// it was queued.
func ReportQuotaReserved(w Workload, waited time.Duration) {
	seconds := waited.Seconds()
	QuotaReservedWorkloadsTotal.WithLabelValues(w.ClusterQueue, w.PriorityClass).Inc()
	QuotaReservedWaitTime.WithLabelValues(w.ClusterQueue, w.PriorityClass).Observe(seconds)
	LocalQueueQuotaReservedWorkloadsTotal.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass).Inc()
	LocalQueueQuotaReservedWaitTime.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass).Observe(seconds)
}

// ReportAdmittedAfterChecks counts the admission, at now, of a workload
// whose admission checks passed after it reserved quota.
func ReportAdmittedAfterChecks(wl *musterv1beta1.Workload, now time.Time) {
	ReportAdmitted(WorkloadOf(wl), now.Sub(QueuedAt(wl)), now.Sub(workload.ReservedAt(wl)))
}

// ReportAdmitted counts a workload's admission, waited after it was
// queued, of which checksWait after its quota was reserved (its admission
// checks).
func ReportAdmitted(w Workload, waited, checksWait time.Duration) {
	AdmittedWorkloadsTotal.WithLabelValues(w.ClusterQueue, w.PriorityClass).Inc()
	AdmissionWaitTime.WithLabelValues(w.ClusterQueue, w.PriorityClass).Observe(waited.Seconds())
	AdmissionChecksWaitTime.WithLabelValues(w.ClusterQueue, w.PriorityClass).Observe(checksWait.Seconds())
	LocalQueueAdmittedWorkloadsTotal.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass).Inc()
	LocalQueueAdmissionWaitTime.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass).Observe(waited.Seconds())
	LocalQueueAdmissionChecksWaitTime.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass).Observe(checksWait.Seconds())
}

// ReportReady observes the ready wait times of an admitted workload whose
// pods are all ready for the first time since its admission, at now.
func ReportReady(wl *musterv1beta1.Workload, now time.Time) {
	admitted := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadAdmitted)
	if admitted == nil || wl.Status.Admission == nil {
		return
	}
	w := WorkloadOf(wl)
	queued, sinceAdmission := now.Sub(QueuedAt(wl)).Seconds(), now.Sub(admitted.LastTransitionTime.Time).Seconds()
	ReadyWaitTime.WithLabelValues(w.ClusterQueue, w.PriorityClass).Observe(queued)
	AdmittedUntilReadyWaitTime.WithLabelValues(w.ClusterQueue, w.PriorityClass).Observe(sinceAdmission)
	LocalQueueReadyWaitTime.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass).Observe(queued)
	LocalQueueAdmittedUntilReadyWaitTime.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass).Observe(sinceAdmission)
}

// ReportFinished counts a workload that finished.
func ReportFinished(w Workload) {
	FinishedWorkloadsTotal.WithLabelValues(w.ClusterQueue, w.PriorityClass).Inc()
	LocalQueueFinishedWorkloadsTotal.WithLabelValues(w.LocalQueue, w.Namespace, w.PriorityClass).Inc()
}

// ReportEviction counts one eviction written to an admitted workload, at
// now. Every writer of the Evicted condition calls it once the write
// succeeded, so the counter sees every reason, not just the scheduler's.
// cause is the detail under the reason (the preemption reason of a
// Preempted one). wl is the workload as it was before the write.
func ReportEviction(wl *musterv1beta1.Workload, reason, cause string, now time.Time) {
	w := WorkloadOf(wl)
	EvictedWorkloadsTotal.WithLabelValues(w.ClusterQueue, reason, cause, w.PriorityClass).Inc()
	LocalQueueEvictedWorkloadsTotal.WithLabelValues(w.LocalQueue, w.Namespace, reason, cause, w.PriorityClass).Inc()
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadPodsReady); c != nil && c.Status == metav1.ConditionTrue {
		PodsReadyToEvictedTime.WithLabelValues(w.ClusterQueue, reason, cause).Observe(now.Sub(c.LastTransitionTime.Time).Seconds())
	}
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

// clusterQueueVecs are the metrics with a cluster_queue label: all of a
// deleted ClusterQueue's series go with it, counters and histograms too, as
// in Kueue.
var clusterQueueVecs = []*prometheus.MetricVec{
	PendingWorkloads.MetricVec, ReservingActiveWorkloads.MetricVec, AdmittedActiveWorkloads.MetricVec,
	OldestPendingWorkload.MetricVec, ClusterQueueStatus.MetricVec, AdmissionCyclePreemptionSkips.MetricVec,
	ClusterQueueResourceReservation.MetricVec, ClusterQueueResourceUsage.MetricVec, ClusterQueueNominalQuota.MetricVec,
	ClusterQueueBorrowingLimit.MetricVec, ClusterQueueLendingLimit.MetricVec, ClusterQueueWeightedShare.MetricVec,
	QuotaReservedWorkloadsTotal.MetricVec, AdmittedWorkloadsTotal.MetricVec, FinishedWorkloadsTotal.MetricVec,
	EvictedWorkloadsTotal.MetricVec,
	QuotaReservedWaitTime.MetricVec, AdmissionWaitTime.MetricVec, AdmissionChecksWaitTime.MetricVec,
	ReadyWaitTime.MetricVec, AdmittedUntilReadyWaitTime.MetricVec, PodsReadyToEvictedTime.MetricVec,
}

// localQueueVecs are the metrics of a LocalQueue (name, namespace).
var localQueueVecs = []*prometheus.MetricVec{
	LocalQueuePendingWorkloads.MetricVec, LocalQueueReservingActiveWorkloads.MetricVec,
	LocalQueueAdmittedActiveWorkloads.MetricVec, LocalQueueStatus.MetricVec,
	LocalQueueQuotaReservedWorkloadsTotal.MetricVec, LocalQueueAdmittedWorkloadsTotal.MetricVec,
	LocalQueueFinishedWorkloadsTotal.MetricVec, LocalQueueEvictedWorkloadsTotal.MetricVec,
	LocalQueueQuotaReservedWaitTime.MetricVec, LocalQueueAdmissionWaitTime.MetricVec,
	LocalQueueAdmissionChecksWaitTime.MetricVec, LocalQueueReadyWaitTime.MetricVec,
	LocalQueueAdmittedUntilReadyWaitTime.MetricVec,
}

// ForgetClusterQueue drops every series of a deleted ClusterQueue, and
// the preemptions it made.
func ForgetClusterQueue(name string) {
	for _, v := range clusterQueueVecs {
		v.DeletePartialMatch(prometheus.Labels{"cluster_queue": name})
	}
	PreemptedWorkloadsTotal.DeletePartialMatch(prometheus.Labels{"preempting_cluster_queue": name})
}

// ForgetLocalQueue drops every series of a deleted LocalQueue.
func ForgetLocalQueue(namespace, name string) {
	for _, v := range localQueueVecs {
		v.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "name": name})
	}
}

// ForgetCohort drops the series of a deleted cohort.
func ForgetCohort(name string) {
	CohortWeightedShare.DeletePartialMatch(prometheus.Labels{"cohort": name})
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
