package v1beta1

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Validate reports every invalid field of a defaulted configuration but
// integrations.frameworks, which only the job registry can check
// (controllers/jobs.Validate).
func Validate(c *Configuration) field.ErrorList {
	var errs field.ErrorList
	if *c.ClientConnection.QPS <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("clientConnection", "qps"), *c.ClientConnection.QPS, "must be positive"))
	}
	if *c.ClientConnection.Burst <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("clientConnection", "burst"), *c.ClientConnection.Burst, "must be positive"))
	}
	if p := *c.Webhook.Port; p <= 0 || p > 65535 {
		errs = append(errs, field.Invalid(field.NewPath("webhook", "port"), p, "must be between 1 and 65535"))
	}
	if d := c.PreemptionDelay; d != nil && d.Duration < 0 {
		errs = append(errs, field.Invalid(field.NewPath("preemptionDelay"), d.Duration.String(), "must not be negative"))
	}
	if d := c.NodeFailureGracePeriod; d != nil && d.Duration < 0 {
		errs = append(errs, field.Invalid(field.NewPath("nodeFailureGracePeriod"), d.Duration.String(), "must not be negative"))
	}
	if c.ManagedJobsNamespaceSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(c.ManagedJobsNamespaceSelector); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("managedJobsNamespaceSelector"), c.ManagedJobsNamespaceSelector, err.Error()))
		}
	}
	errs = append(errs, validatePodsReady(c.WaitForPodsReady, field.NewPath("waitForPodsReady"))...)
	errs = append(errs, validateGang(c.GangScheduling, field.NewPath("gangScheduling"))...)
	errs = append(errs, validateFairSharing(c.FairSharing, field.NewPath("fairSharing"))...)
	errs = append(errs, validateMultiCluster(c.MultiCluster, field.NewPath("multiCluster"))...)
	le := c.LeaderElection
	if *le.LeaderElect && le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
		errs = append(errs, field.Invalid(field.NewPath("leaderElection", "leaseDuration"), le.LeaseDuration.Duration.String(), "must be greater than renewDeadline"))
	}
	return errs
}

func validateFairSharing(f *FairSharing, path *field.Path) field.ErrorList {
	u := f.Usage
	if u == nil {
		return nil
	}
	var errs field.ErrorList
	path = path.Child("usage")
	if !f.Enable {
		errs = append(errs, field.Invalid(path, "set", "needs fairSharing.enable: usage decay orders the fair-sharing tournament"))
	}
	if u.HalfLife.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("halfLife"), u.HalfLife.Duration.String(), "must not be negative"))
	}
	if u.SamplingInterval != nil && u.SamplingInterval.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("samplingInterval"), u.SamplingInterval.Duration.String(), "must be positive"))
	}
	for name, w := range u.Weights {
		if w.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Child("weights").Key(string(name)), w.String(), "must not be negative"))
		}
	}
	return errs
}

func validatePodsReady(w *WaitForPodsReady, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if w.Timeout.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("timeout"), w.Timeout.Duration.String(), "must be positive"))
	}
	if w.RecoveryTimeout != nil && w.RecoveryTimeout.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("recoveryTimeout"), w.RecoveryTimeout.Duration.String(), "must be positive"))
	}
	rs := w.RequeuingStrategy
	rsPath := path.Child("requeuingStrategy")
	if ts := ptr.Deref(rs.Timestamp, EvictionTimestamp); ts != EvictionTimestamp && ts != CreationTimestamp {
		errs = append(errs, field.NotSupported(rsPath.Child("timestamp"), ts, []RequeuingTimestamp{EvictionTimestamp, CreationTimestamp}))
	}
	if *rs.BackoffBaseSeconds <= 0 {
		errs = append(errs, field.Invalid(rsPath.Child("backoffBaseSeconds"), *rs.BackoffBaseSeconds, "must be positive"))
	}
	if *rs.BackoffMaxSeconds < *rs.BackoffBaseSeconds {
		errs = append(errs, field.Invalid(rsPath.Child("backoffMaxSeconds"), *rs.BackoffMaxSeconds, "must not be less than backoffBaseSeconds"))
	}
	if rs.BackoffLimitCount != nil && *rs.BackoffLimitCount < 0 {
		errs = append(errs, field.Invalid(rsPath.Child("backoffLimitCount"), *rs.BackoffLimitCount, "must not be negative"))
	}
	return errs
}

func validateGang(g *GangScheduling, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, ok := GangProviders[g.Provider]; !ok {
		errs = append(errs, field.NotSupported(path.Child("provider"), g.Provider, slices.Sorted(maps.Keys(GangProviders))))
	}
	for p, n := range g.SchedulerNames {
		if _, ok := GangProviders[p]; !ok {
			errs = append(errs, field.NotSupported(path.Child("schedulerNames").Key(p), p, slices.Sorted(maps.Keys(GangProviders))))
		}
		for _, msg := range validation.IsDNS1123Subdomain(n) {
			errs = append(errs, field.Invalid(path.Child("schedulerNames").Key(p), n, msg))
		}
	}
	return errs
}

func validateMultiCluster(m *MultiCluster, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidLabelValue(m.Origin) {
		errs = append(errs, field.Invalid(path.Child("origin"), m.Origin, msg))
	}
	if m.Origin == "" {
		errs = append(errs, field.Required(path.Child("origin"), "labels the worker clusters' copies"))
	}
	if d := m.GCInterval; d.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("gcInterval"), d.Duration.String(), "must not be negative"))
	}
	if d := m.WorkerLostTimeout; d.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("workerLostTimeout"), d.Duration.String(), "must not be negative"))
	}
	if m.Dispatcher != AllAtOnceDispatcher && m.Dispatcher != IncrementalDispatcher {
		errs = append(errs, field.NotSupported(path.Child("dispatcher"), m.Dispatcher, []string{AllAtOnceDispatcher, IncrementalDispatcher}))
	}
	return errs
}
