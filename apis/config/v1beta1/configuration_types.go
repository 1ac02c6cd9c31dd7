package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true

// Configuration is the component configuration of the Muster manager.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// Namespace is where Muster runs; its job webhooks skip it.
	Namespace *string `json:"namespace,omitempty"`

	// ManagedJobsNamespaceSelector selects the namespaces whose jobs Muster
	// gates (Kueue's option of the same name); jobs elsewhere are left
	// alone even when they name a queue. The default selects every
	// namespace but kube-system and Namespace. The job webhook
	// configurations must carry the same selector (the Helm chart sets both
	// from one value): then a Muster outage blocks job creation only in the
	// namespaces it manages, as its webhooks fail closed there.
	ManagedJobsNamespaceSelector *metav1.LabelSelector `json:"managedJobsNamespaceSelector,omitempty"`

	// Health is where the liveness and readiness probes are served.
	Health HealthConfig `json:"health,omitempty"`

	// Metrics is where Prometheus metrics are served.
	Metrics MetricsConfig `json:"metrics,omitempty"`

	// Visibility is where the manager serves visibility.muster.dev, the
	// aggregated API of pending workloads and their positions.
	Visibility VisibilityConfig `json:"visibility,omitempty"`

	// Dashboard is the read-only web dashboard of the queues.
	Dashboard DashboardConfig `json:"dashboard,omitempty"`

	// PprofBindAddress serves Go's pprof profiles (e.g. "127.0.0.1:8082");
	// empty, the default, turns them off.
	PprofBindAddress string `json:"pprofBindAddress,omitempty"`

	// Webhook configures the webhook server.
	Webhook WebhookConfig `json:"webhook,omitempty"`

	// LeaderElection configures leader election between replicas: only the
	// leader schedules and writes; every replica serves webhooks.
	LeaderElection *LeaderElectionConfig `json:"leaderElection,omitempty"`

	// ClientConnection limits the manager's requests to the API server.
	ClientConnection *ClientConnection `json:"clientConnection,omitempty"`

	// Integrations selects the job kinds Muster manages.
	Integrations *Integrations `json:"integrations,omitempty"`

	// InternalCertManagement makes Muster create and rotate its own webhook
	// serving certificate.
	InternalCertManagement *InternalCertManagement `json:"internalCertManagement,omitempty"`

	// WaitForPodsReady evicts and requeues admitted workloads whose pods do
	// not all become ready in time.
	WaitForPodsReady *WaitForPodsReady `json:"waitForPodsReady,omitempty"`

	// FairSharing enables DRF fair sharing between the queues of a cohort.
	FairSharing *FairSharing `json:"fairSharing,omitempty"`

	// PreemptionDelay is how long a workload that fits only by preempting
	// waits, holding the room it needs (nothing else may take what frees
	// there), before it evicts anyone: when running workloads finish in
	// time, nobody's work is thrown away. 0 preempts at once, as Kueue does.
	PreemptionDelay *metav1.Duration `json:"preemptionDelay,omitempty"`

	// NodeFailureGracePeriod is how long a node must stay NotReady before
	// the pods placed on it are moved to other nodes (or their workload
	// evicted): a node that flaps back within it changes nothing. A deleted
	// node, or a NoExecute taint a pod set does not tolerate, fails at
	// once. Default 30s, as Kueue's; 0 acts on the first NotReady.
	NodeFailureGracePeriod *metav1.Duration `json:"nodeFailureGracePeriod,omitempty"`

	// TopologyAwareScheduling tunes topology-aware placement.
	TopologyAwareScheduling *TopologyAwareScheduling `json:"topologyAwareScheduling,omitempty"`

	// GangScheduling is the gang scheduler admitted jobs are handed to,
	// unless their ClusterQueue names another (docs/gang-scheduling.md).
	GangScheduling *GangScheduling `json:"gangScheduling,omitempty"`

	// MultiCluster configures the dispatch of workloads to worker clusters
	// by muster.dev/multicluster admission checks (docs/multi-cluster.md).
	MultiCluster *MultiCluster `json:"multiCluster,omitempty"`
}

// TopologyAwareScheduling tunes topology-aware placement.
type TopologyAwareScheduling struct {
	// BalancedPlacement places a pod set that asks for a preferred level
	// evenly over the fewest domains below it, inside one domain above it,
	// before falling back to the tightest domains (Kueue's balanced
	// placement, its TASBalancedPlacement feature gate; off by default in
	// both). Pod sets placed together (podSetGroupName) are not balanced.
	BalancedPlacement bool `json:"balancedPlacement,omitempty"`
}

// The dispatchers of a multi-cluster check.
const (
	// AllAtOnceDispatcher sends a workload's copies to every active worker
	// cluster of its check at once.
	AllAtOnceDispatcher = "AllAtOnce"
	// IncrementalDispatcher sends them to a few worker clusters at a time,
	// adding more each round that none of them reserves quota.
	IncrementalDispatcher = "Incremental"
)

// MultiCluster configures the dispatch of workloads to worker clusters.
type MultiCluster struct {
	// Origin is the value of the muster.dev/multicluster-origin label on
	// what this manager creates in the worker clusters; managers sharing a
	// worker need different origins. Default "muster".
	Origin string `json:"origin,omitempty"`
	// GCInterval is how often the worker clusters are swept for copies
	// whose workload in this manager is gone or was sent elsewhere. 0
	// turns the sweep off. Default 1m, as Kueue's.
	GCInterval *metav1.Duration `json:"gcInterval,omitempty"`
	// WorkerLostTimeout is how long a workload waits for the worker
	// cluster it runs in to answer again before it is dispatched anew.
	// Default 15m, as Kueue's.
	WorkerLostTimeout *metav1.Duration `json:"workerLostTimeout,omitempty"`
	// Dispatcher is AllAtOnce (the default) or Incremental.
	Dispatcher string `json:"dispatcher,omitempty"`
}

// GangScheduling configures the hand-off of admitted jobs to a gang
// scheduler.
type GangScheduling struct {
	// Provider is None (the default: pods are bound one by one),
	// KubeScheduler, Volcano, Coscheduling or KAI.
	Provider string `json:"provider,omitempty"`
	// Queue is the gang scheduler's queue (Volcano, KAI) for jobs whose
	// ClusterQueue and labels name none. Default "default".
	Queue string `json:"queue,omitempty"`
	// SchedulerNames overrides, per provider, the schedulerName the pods
	// get: Volcano "volcano", Coscheduling "scheduler-plugins-scheduler",
	// KAI "kai-scheduler"; KubeScheduler keeps the pods' own.
	SchedulerNames map[string]string `json:"schedulerNames,omitempty"`
	// OperatorPodGroups lists the frameworks (e.g. kubeflow.org/pytorchjob)
	// whose operator makes the pod group itself (training-operator with
	// --gang-scheduler-name): Muster then sets the operator's own fields
	// to the admitted counts instead of creating a second one.
	OperatorPodGroups []string `json:"operatorPodGroups,omitempty"`
}

// HealthConfig configures the health probes.
type HealthConfig struct {
	// HealthProbeBindAddress is the address of /healthz and /readyz.
	HealthProbeBindAddress string `json:"healthProbeBindAddress,omitempty"`
}

// MetricsConfig configures the metrics endpoint.
type MetricsConfig struct {
	// BindAddress is the address of /metrics; "0" turns it off.
	BindAddress string `json:"bindAddress,omitempty"`
	// SecureServing, the default, serves /metrics over HTTPS and only to
	// clients whose bearer token the API server authenticates (TokenReview)
	// and authorizes for GET /metrics (SubjectAccessReview; the
	// metrics-reader ClusterRole grants it). false serves plain HTTP to
	// anyone, for a manager on a developer's machine only: queue names and
	// usage are not for every pod in the cluster to read.
	SecureServing *bool `json:"secureServing,omitempty"`
	// CertDir holds tls.crt and tls.key for the HTTPS metrics endpoint.
	// Empty, or without those files, a self-signed certificate is generated
	// at start (Prometheus then scrapes with insecureSkipVerify).
	CertDir string `json:"certDir,omitempty"`
}

// VisibilityConfig configures the visibility API server.
type VisibilityConfig struct {
	// BindAddress is the host:port of the visibility API; "0" turns it off.
	// The kube-apiserver reaches it through the APIService
	// v1beta1.visibility.muster.dev and the webhook Service's visibility
	// port. Every replica serves it from the queues it keeps
	// (docs/visibility.md).
	BindAddress string `json:"bindAddress,omitempty"`
}

// DashboardConfig configures the web dashboard (docs/dashboard.md).
type DashboardConfig struct {
	// BindAddress is the host:port of the dashboard, under /dashboard/;
	// "0", the default, turns it off.
	BindAddress string `json:"bindAddress,omitempty"`
	// SecureServing, the default, serves it over HTTPS (self-signed) and
	// only to bearer tokens the API server authenticates and authorizes for
	// GET on /dashboard/* (the dashboard-viewer ClusterRole), as /metrics,
	// and lists the workloads of only the namespaces the token may list
	// Workloads in. A browser posts the token once to the form at
	// /dashboard/login, which keeps it in a cookie. false serves plain HTTP
	// to anyone (a developer's machine only).
	SecureServing *bool `json:"secureServing,omitempty"`
	// CertDir holds tls.crt and tls.key for the HTTPS dashboard (a mounted
	// Secret, reloaded when it changes). Empty, or without those files, a
	// self-signed certificate is generated at start.
	CertDir string `json:"certDir,omitempty"`
}

// WebhookConfig configures the webhook server.
type WebhookConfig struct {
	// Port is the port the webhook server listens on.
	Port *int `json:"port,omitempty"`
	// Host is the address the webhook server binds to; empty means all.
	Host string `json:"host,omitempty"`
	// CertDir holds tls.crt and tls.key.
	CertDir string `json:"certDir,omitempty"`
}

// LeaderElectionConfig configures leader election.
type LeaderElectionConfig struct {
	// LeaderElect turns leader election on.
	LeaderElect *bool `json:"leaderElect,omitempty"`
	// ResourceName is the name of the Lease.
	ResourceName string `json:"resourceName,omitempty"`
	// ResourceNamespace is the namespace of the Lease; default: Namespace.
	ResourceNamespace string `json:"resourceNamespace,omitempty"`
	// LeaseDuration is how long followers wait before taking a lease that
	// was not renewed.
	LeaseDuration *metav1.Duration `json:"leaseDuration,omitempty"`
	// RenewDeadline is how long the leader tries to renew before giving up.
	RenewDeadline *metav1.Duration `json:"renewDeadline,omitempty"`
	// RetryPeriod is how often the lease is tried.
	RetryPeriod *metav1.Duration `json:"retryPeriod,omitempty"`
}

// ClientConnection limits requests to the API server.
type ClientConnection struct {
	// QPS is the sustained request rate.
	QPS *float32 `json:"qps,omitempty"`
	// Burst is the short-term request rate.
	Burst *int32 `json:"burst,omitempty"`
}

// Integrations selects the job kinds Muster manages.
type Integrations struct {
	// Frameworks lists the enabled kinds by framework name (batch/job,
	// kubeflow.org/pytorchjob, ray.io/raycluster, as the kinds registered
	// in controllers/jobs name themselves). Unset, the kinds registered as
	// enabled by default: all three today.
	Frameworks []string `json:"frameworks,omitempty"`
	// AcceptKueueQueueLabel makes Muster manage jobs labelled with Kueue's
	// kueue.x-k8s.io/queue-name too. Turn it off to run beside Kueue.
	AcceptKueueQueueLabel *bool `json:"acceptKueueQueueLabel,omitempty"`
}

// InternalCertManagement configures Muster's own webhook certificates.
type InternalCertManagement struct {
	// Enable turns internal certificate management on.
	Enable *bool `json:"enable,omitempty"`
	// WebhookServiceName is the Service in front of the webhook server.
	WebhookServiceName *string `json:"webhookServiceName,omitempty"`
	// WebhookSecretName is the Secret that stores the certificates.
	WebhookSecretName *string `json:"webhookSecretName,omitempty"`
}

// WaitForPodsReady configures eviction of workloads whose pods do not start.
type WaitForPodsReady struct {
	// Enable turns the feature on.
	Enable bool `json:"enable,omitempty"`
	// Timeout after admission within which all pods must be ready.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// RecoveryTimeout, for a workload whose pods were all ready once, is how
	// long they may stay not ready (a pod restarting, a node lost) before it
	// is evicted. Unset, as in Kueue, a workload that was ready once is never
	// evicted for losing readiness.
	RecoveryTimeout *metav1.Duration `json:"recoveryTimeout,omitempty"`
	// BlockAdmission admits nothing else while an admitted workload is not
	// ready yet.
	BlockAdmission *bool `json:"blockAdmission,omitempty"`
	// RequeuingStrategy is the backoff of evicted workloads.
	RequeuingStrategy *RequeuingStrategy `json:"requeuingStrategy,omitempty"`
}

// RequeuingStrategy is the backoff of workloads evicted by waitForPodsReady.
type RequeuingStrategy struct {
	// BackoffBaseSeconds is the first delay; it doubles on each requeue.
	BackoffBaseSeconds *int32 `json:"backoffBaseSeconds,omitempty"`
	// BackoffMaxSeconds caps the delay.
	BackoffMaxSeconds *int32 `json:"backoffMaxSeconds,omitempty"`
	// BackoffLimitCount is how many times a workload is requeued before it is
	// deactivated; unset means forever.
	BackoffLimitCount *int32 `json:"backoffLimitCount,omitempty"`
	// Timestamp orders a workload requeued after a PodsReady timeout in its
	// queue: Eviction (the default) puts it behind those that waited while
	// it ran, Creation gives it back its original place.
	Timestamp *RequeuingTimestamp `json:"timestamp,omitempty"`
}

// RequeuingTimestamp is Eviction or Creation.
type RequeuingTimestamp string

const (
	// EvictionTimestamp orders a requeued workload from its eviction.
	EvictionTimestamp RequeuingTimestamp = "Eviction"
	// CreationTimestamp orders a requeued workload from its creation.
	CreationTimestamp RequeuingTimestamp = "Creation"
)

// FairSharing configures DRF fair sharing.
type FairSharing struct {
	// Enable turns fair sharing on.
	Enable bool `json:"enable,omitempty"`
	// Usage, when set, orders the fair-sharing tournament by usage decayed
	// over time instead of current usage (docs/fairness.md).
	Usage *FairSharingUsage `json:"usage,omitempty"`
}

// FairSharingUsage is usage-decayed fair sharing.
type FairSharingUsage struct {
	// HalfLife is how long until past usage weighs half; 0 keeps none.
	HalfLife metav1.Duration `json:"halfLife"`
	// SamplingInterval is how often usage is sampled into the decayed
	// average and written to the queues' status.fairSharing (default 5m).
	SamplingInterval *metav1.Duration `json:"samplingInterval,omitempty"`
	// Weights scale each resource's share (e.g. nvidia.com/gpu: 4 makes a
	// GPU count four times a core's); a resource not named weighs 1.
	Weights map[corev1.ResourceName]resource.Quantity `json:"weights,omitempty"`
}

func init() {
	register(&Configuration{})
}
