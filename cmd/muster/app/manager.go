// Package app assembles the Muster manager: the controller-runtime manager
// built from the component configuration, with every controller and webhook
// registered on it. It sits above controllers/ and webhooks/, which import
// neither each other nor it (as Kubernetes' cmd/<binary>/app packages do
// for their binaries); cmd/muster and the test framework build on it.
package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/cmd/muster/servers/dashboard"
	"github.com/musterhq/muster/cmd/muster/servers/visibility"
	"github.com/musterhq/muster/controllers/admission"
	"github.com/musterhq/muster/controllers/admissionchecks"
	"github.com/musterhq/muster/controllers/admissionchecks/provisioning"
	"github.com/musterhq/muster/controllers/gang"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs"
	"github.com/musterhq/muster/controllers/metrics"
	"github.com/musterhq/muster/controllers/multicluster"
	"github.com/musterhq/muster/controllers/scheduling"
	"github.com/musterhq/muster/controllers/ungater"
	"github.com/musterhq/muster/internal/core/quota"
	"github.com/musterhq/muster/internal/core/scheduler"
	"github.com/musterhq/muster/webhooks"
)

// Scheme returns the scheme the manager works with: Kubernetes', Muster's
// and every registered job kind's types.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, musterv1beta1.AddToScheme, configv1beta1.AddToScheme, jobs.AddToScheme, gang.AddToScheme,
		autoscaling.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Option adjusts how NewManager builds the manager.
type Option func(*options)

type options struct {
	clock  clock.WithTicker
	tweaks []func(*ctrl.Options)
}

// WithClock sets the time source of the controllers (tests).
func WithClock(c clock.WithTicker) Option { return func(o *options) { o.clock = c } }

// WithManagerOptions adjusts controller-runtime's manager options (tests run
// several managers in one process).
func WithManagerOptions(f func(*ctrl.Options)) Option {
	return func(o *options) { o.tweaks = append(o.tweaks, f) }
}

// LoadConfig is configv1beta1.Load completed with what only the job
// registry knows: the default and the validation of
// integrations.frameworks.
func LoadConfig(path string) (*configv1beta1.Configuration, error) {
	cfg, err := configv1beta1.Load(path)
	if err != nil {
		return nil, err
	}
	if err := completeIntegrations(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// completeIntegrations defaults and validates integrations.frameworks from
// the job registry; a second call changes nothing.
func completeIntegrations(cfg *configv1beta1.Configuration) error {
	jobs.SetDefaults(cfg)
	if errs := jobs.Validate(cfg); len(errs) > 0 {
		return fmt.Errorf("invalid config: %w", errs.ToAggregate())
	}
	return nil
}

// NewManager builds a manager from a defaulted configuration (its
// frameworks defaulted here if unset) and registers Muster's controllers,
// webhooks and probes on it.
func NewManager(restConfig *rest.Config, cfg *configv1beta1.Configuration, opts ...Option) (manager.Manager, error) {
	o := options{clock: clock.RealClock{}}
	for _, opt := range opts {
		opt(&o)
	}
	if err := completeIntegrations(cfg); err != nil {
		return nil, err
	}
	role := metrics.RoleStandalone
	if *cfg.LeaderElection.LeaderElect {
		role = metrics.RoleLeader
	}
	metrics.Register(role)
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	rc := rest.CopyConfig(restConfig)
	rc.QPS = *cfg.ClientConnection.QPS
	rc.Burst = int(*cfg.ClientConnection.Burst)
	writeLatency := admission.NewWriteLatency()
	rc.Wrap(writeLatency.Wrap)
	mgrOpts := managerOptions(scheme, cfg)
	for _, t := range o.tweaks {
		t(&mgrOpts)
	}
	mgr, err := ctrl.NewManager(rc, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := Setup(mgr, cfg, o.clock, writeLatency); err != nil {
		return nil, err
	}
	return mgr, nil
}

// Run builds the manager and runs it until ctx is cancelled.
func Run(ctx context.Context, restConfig *rest.Config, cfg *configv1beta1.Configuration) error {
	mgr, err := NewManager(restConfig, cfg)
	if err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("Starting manager", "namespace", *cfg.Namespace,
		"leaderElection", *cfg.LeaderElection.LeaderElect, "frameworks", cfg.Integrations.Frameworks)
	return mgr.Start(ctx)
}

func managerOptions(scheme *runtime.Scheme, cfg *configv1beta1.Configuration) ctrl.Options {
	le := cfg.LeaderElection
	return ctrl.Options{
		Scheme:                        scheme,
		HealthProbeBindAddress:        cfg.Health.HealthProbeBindAddress,
		Metrics:                       metricsOptions(cfg.Metrics),
		PprofBindAddress:              cfg.PprofBindAddress,
		Cache:                         cacheOptions(),
		LeaderElection:                *le.LeaderElect,
		LeaderElectionID:              le.ResourceName,
		LeaderElectionNamespace:       le.ResourceNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &le.LeaseDuration.Duration,
		RenewDeadline:                 &le.RenewDeadline.Duration,
		RetryPeriod:                   &le.RetryPeriod.Duration,
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    cfg.Webhook.Host,
			Port:    *cfg.Webhook.Port,
			CertDir: cfg.Webhook.CertDir,
		}),
	}
}

// cacheOptions keep the informers' copies small: no object's
// managedFields (nothing reads them; a Workload's are a kilobyte or more),
// and Nodes and Pods trimmed to what placement reads.
func cacheOptions() cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         scheduling.CacheByObject(),
	}
}

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// metricsOptions serves /metrics as kubebuilder v4 scaffolds do: over HTTPS
// (the configured certificate, or a self-signed one) and only to clients the
// API server authenticates and authorizes for GET /metrics (hence the
// tokenreviews and subjectaccessreviews grants above). HTTP/2 is off, as in
// kubebuilder, against HTTP/2 stream-reset floods (CVE-2023-44487); a
// scraper needs nothing more than HTTP/1.1. Plain HTTP, with no
// authentication, only when the configuration turns secureServing off.
func metricsOptions(m configv1beta1.MetricsConfig) metricsserver.Options {
	o := metricsserver.Options{BindAddress: m.BindAddress}
	if !*m.SecureServing {
		return o
	}
	o.SecureServing = true
	o.CertDir = m.CertDir
	o.FilterProvider = filters.WithAuthenticationAndAuthorization
	o.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	return o
}

// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Setup registers Muster's controllers and webhooks on a manager. With
// internal certificate management the webhooks are registered, and the
// webhook server started, only once the certificates exist. writeLatency,
// if not nil, follows the writes of the rest.Config mgr was built from and
// sizes the admission writers by them.
func Setup(mgr manager.Manager, cfg *configv1beta1.Configuration, clk clock.WithTicker, writeLatency *admission.WriteLatency) error {
	jobOpts := jobOptions(cfg, clk)
	jobOpts.Gang = gang.New(mgr.GetClient(), gang.ConfigFrom(cfg.GangScheduling))
	setupWebhooks := func() error {
		if err := webhooks.Setup(mgr); err != nil {
			return fmt.Errorf("setting up webhooks: %w", err)
		}
		if err := gang.SetupPodWebhook(mgr); err != nil {
			return fmt.Errorf("setting up the pod webhook: %w", err)
		}
		return jobs.SetupWebhooks(mgr, cfg, jobOpts)
	}
	certsReady, err := setupCerts(mgr, cfg, setupWebhooks)
	if err != nil {
		return err
	}
	wfpr := cfg.WaitForPodsReady
	coreOpts := scheduling.Options{
		FairSharing:       cfg.FairSharing.Enable,
		PreemptionDelay:   ptr.Deref(cfg.PreemptionDelay, metav1.Duration{}).Duration,
		NodeFailureGrace:  ptr.Deref(cfg.NodeFailureGracePeriod, metav1.Duration{}).Duration,
		BalancedPlacement: cfg.TopologyAwareScheduling != nil && cfg.TopologyAwareScheduling.BalancedPlacement,
		BlockAdmission:    wfpr.Enable && *wfpr.BlockAdmission,
		// Only PodsReady timeouts follow requeuingStrategy.timestamp.
		RequeueByCreation: ptr.Deref(wfpr.RequeuingStrategy.Timestamp, configv1beta1.EvictionTimestamp) == configv1beta1.CreationTimestamp,
		Clock:             clk,
		DefaultGang:       musterv1beta1.GangSchedulerProvider(cfg.GangScheduling.Provider),
	}
	coreOpts.UsageDecay, coreOpts.UsageSampling = usageDecay(cfg.FairSharing)
	state, err := scheduling.Setup(mgr, coreOpts)
	if err != nil {
		return fmt.Errorf("setting up the core controllers: %w", err)
	}
	if err := admission.Setup(mgr, state, clk, writeLatency); err != nil {
		return fmt.Errorf("setting up the admission loop: %w", err)
	}
	if err := setupAdmissionChecks(mgr, clk); err != nil {
		return err
	}
	if err := setupMultiCluster(mgr, cfg, clk); err != nil {
		return err
	}
	// The visibility API and the dashboard share the orders they read, so
	// the LocalQueues' turns are taken once per change of a queue.
	orders := &scheduler.AdmissionOrders{Cache: state.Cache}
	if err := setupVisibility(mgr, cfg, state, orders, clk, certsReady); err != nil {
		return err
	}
	if err := setupDashboard(mgr, cfg, state, orders, clk); err != nil {
		return err
	}
	if err := setupGangChecker(mgr, state); err != nil {
		return err
	}
	if err := jobs.SetupControllers(context.Background(), mgr, cfg, jobOpts); err != nil {
		return fmt.Errorf("setting up the job integrations: %w", err)
	}
	if err := ungater.New(mgr.GetClient()).SetupWithManager(context.Background(), mgr); err != nil {
		return fmt.Errorf("setting up the topology ungater: %w", err)
	}
	return nil
}

// setupAdmissionChecks follows the workloads waiting for admission checks
// and answers Muster's own: the ProvisioningRequest check.
func setupAdmissionChecks(mgr manager.Manager, clk clock.PassiveClock) error {
	lifecycle := &admissionchecks.Lifecycle{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("muster-admissionchecks"), Clock: clk}
	if err := lifecycle.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the admission check lifecycle: %w", err)
	}
	prov := &provisioning.Controller{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("muster-provisioning"), Clock: clk}
	if err := prov.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the ProvisioningRequest check: %w", err)
	}
	return nil
}

// setupMultiCluster answers Muster's multi-cluster checks: the manager
// dispatches workloads to the worker clusters of its MultiClusters.
func setupMultiCluster(mgr manager.Manager, cfg *configv1beta1.Configuration, clk clock.PassiveClock) error {
	m := cfg.MultiCluster
	err := multicluster.Setup(mgr, multicluster.Options{
		Namespace:         *cfg.Namespace,
		Origin:            m.Origin,
		GCInterval:        m.GCInterval.Duration,
		WorkerLostTimeout: m.WorkerLostTimeout.Duration,
		Incremental:       m.Dispatcher == configv1beta1.IncrementalDispatcher,
		Kinds:             jobs.Registry().MultiClusterKinds(cfg.Integrations.Frameworks),
		QPS:               *cfg.ClientConnection.QPS,
		Burst:             int(*cfg.ClientConnection.Burst),
		Clock:             clk,
	})
	if err != nil {
		return fmt.Errorf("setting up the multi-cluster dispatch: %w", err)
	}
	return nil
}

// usageDecay is fairSharing.usage for the core (nil when off).
func usageDecay(f *configv1beta1.FairSharing) (*quota.DecayConfig, time.Duration) {
	if f == nil || !f.Enable || f.Usage == nil {
		return nil, 0
	}
	d := &quota.DecayConfig{HalfLife: f.Usage.HalfLife.Duration, Weights: map[string]float64{}}
	for name, w := range f.Usage.Weights {
		d.Weights[string(name)] = w.AsApproximateFloat64()
	}
	return d, f.Usage.SamplingInterval.Duration
}

// visibilityEnabled is whether the manager serves visibility.muster.dev.
func visibilityEnabled(cfg *configv1beta1.Configuration) bool {
	return cfg.Visibility.BindAddress != "0"
}

// setupVisibility serves the pending-workloads API from the scheduler's
// queues, on every replica, once the serving certificate is on disk.
func setupVisibility(mgr manager.Manager, cfg *configv1beta1.Configuration, state *scheduling.State, orders *scheduler.AdmissionOrders, clk clock.PassiveClock, certsReady <-chan struct{}) error {
	if !visibilityEnabled(cfg) {
		return nil
	}
	server := &visibility.Server{
		BindAddress: cfg.Visibility.BindAddress,
		CertDir:     cfg.Webhook.CertDir,
		RestConfig:  mgr.GetConfig(),
		Source: visibility.Source{Queues: state.Queues, Synced: state.Synced, Reason: state.PendingReason,
			Order: orders.Order, Cache: state.Cache, Policy: state.Config, Clock: clk},
	}
	return mgr.Add(afterCerts{server: server, ready: certsReady})
}

// setupDashboard serves the web dashboard when dashboard.bindAddress is
// set (off by default).
func setupDashboard(mgr manager.Manager, cfg *configv1beta1.Configuration, state *scheduling.State, orders *scheduler.AdmissionOrders, clk clock.Clock) error {
	if cfg.Dashboard.BindAddress == "0" {
		return nil
	}
	return mgr.Add(&dashboard.Server{
		BindAddress: cfg.Dashboard.BindAddress,
		Secure:      *cfg.Dashboard.SecureServing,
		CertDir:     cfg.Dashboard.CertDir,
		RestConfig:  mgr.GetConfig(),
		Clock:       clk,
		Source: dashboard.Source{Queues: state.Queues, Cache: state.Cache, Order: orders.Order, Reader: mgr.GetClient(),
			Reason: state.PendingReason, Recent: state.Recent, Synced: state.Synced, Leading: state.Leading},
	})
}

// afterCerts starts the visibility server once the certificates exist.
type afterCerts struct {
	server *visibility.Server
	ready  <-chan struct{}
}

func (a afterCerts) NeedLeaderElection() bool { return a.server.NeedLeaderElection() }

func (a afterCerts) Start(ctx context.Context) error {
	select {
	case <-a.ready:
	case <-ctx.Done():
		return nil
	}
	return a.server.Start(ctx)
}

// setupGangChecker has the API server asked, at start and every 5 s,
// which gang schedulers it serves: a ClusterQueue whose gang scheduler is
// missing admits nothing (Active=False, GangSchedulerNotFound).
func setupGangChecker(mgr manager.Manager, state *scheduling.State) error {
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("setting up the gang scheduler check: %w", err)
	}
	checker := &gang.ServedChecker{Discovery: dc, Sink: state, Interval: 5 * time.Second}
	// Known before any ClusterQueue is applied: a queue is never shown
	// active, nor admits, for a moment after a restart because its gang
	// scheduler's API has not been asked about yet.
	checker.CheckAll(context.Background())
	return mgr.Add(checker)
}

// managedNamespaces is managedJobsNamespaceSelector as a selector (it was
// validated when the configuration was loaded).
func managedNamespaces(cfg *configv1beta1.Configuration) labels.Selector {
	if cfg.ManagedJobsNamespaceSelector == nil {
		return nil
	}
	s, err := metav1.LabelSelectorAsSelector(cfg.ManagedJobsNamespaceSelector)
	if err != nil {
		return labels.Nothing()
	}
	return s
}

func recoveryTimeout(w *configv1beta1.WaitForPodsReady) *time.Duration {
	if w.RecoveryTimeout == nil {
		return nil
	}
	return &w.RecoveryTimeout.Duration
}

func jobOptions(cfg *configv1beta1.Configuration, clk clock.Clock) jobframework.Options {
	wfpr := cfg.WaitForPodsReady
	return jobframework.Options{
		AcceptKueueQueueLabel: *cfg.Integrations.AcceptKueueQueueLabel,
		ManagerNamespace:      *cfg.Namespace,
		ManagedNamespaces:     managedNamespaces(cfg),
		Clock:                 clk,
		PodsReady: jobframework.PodsReadyOptions{
			Enable:          wfpr.Enable,
			Timeout:         wfpr.Timeout.Duration,
			RecoveryTimeout: recoveryTimeout(wfpr),
			BackoffBase:     time.Duration(*wfpr.RequeuingStrategy.BackoffBaseSeconds) * time.Second,
			BackoffMax:      time.Duration(*wfpr.RequeuingStrategy.BackoffMaxSeconds) * time.Second,
			BackoffLimit:    wfpr.RequeuingStrategy.BackoffLimitCount,
		},
	}
}
