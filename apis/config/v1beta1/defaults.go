package v1beta1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Defaults of the configuration.
const (
	DefaultNamespace              = "muster-system"
	DefaultHealthProbeBindAddress = ":8081"
	DefaultMetricsBindAddress     = ":8443"
	DefaultVisibilityBindAddress  = ":8082"
	DefaultUsageSamplingInterval  = 5 * time.Minute
	DefaultWebhookPort            = 9443
	DefaultWebhookCertDir         = "/tmp/k8s-webhook-server/serving-certs"
	DefaultLeaderElectionID       = "muster.dev"
	DefaultWebhookServiceName     = "muster-webhook-service"
	DefaultWebhookSecretName      = "muster-webhook-server-cert"
	DefaultClientQPS              = 50
	DefaultClientBurst            = 100
	DefaultPodsReadyTimeout       = 5 * time.Minute
	DefaultPreemptionDelay        = 2 * time.Second
	DefaultNodeFailureGracePeriod = 30 * time.Second
	DefaultBackoffBaseSeconds     = 60
	DefaultBackoffMaxSeconds      = 3600
	DefaultMultiClusterOrigin     = "muster"
	DefaultMultiClusterGCInterval = time.Minute
	DefaultWorkerLostTimeout      = 15 * time.Minute
)

// SetDefaults fills every field the user left out but
// integrations.frameworks: the job kinds, and which are on by default, are
// the job registry's to say (controllers/jobs.SetDefaults), not the API's.
func SetDefaults(c *Configuration) {
	if c.Namespace == nil {
		c.Namespace = ptr.To(DefaultNamespace)
	}
	if c.Health.HealthProbeBindAddress == "" {
		c.Health.HealthProbeBindAddress = DefaultHealthProbeBindAddress
	}
	if c.Metrics.BindAddress == "" {
		c.Metrics.BindAddress = DefaultMetricsBindAddress
	}
	if c.Dashboard.BindAddress == "" {
		c.Dashboard.BindAddress = "0"
	}
	if c.Dashboard.SecureServing == nil {
		c.Dashboard.SecureServing = ptr.To(true)
	}
	if c.Visibility.BindAddress == "" {
		c.Visibility.BindAddress = DefaultVisibilityBindAddress
	}
	if c.Metrics.SecureServing == nil {
		c.Metrics.SecureServing = ptr.To(true)
	}
	if c.Webhook.Port == nil {
		c.Webhook.Port = ptr.To(DefaultWebhookPort)
	}
	if c.Webhook.CertDir == "" {
		c.Webhook.CertDir = DefaultWebhookCertDir
	}
	setLeaderElectionDefaults(c)
	if c.ClientConnection == nil {
		c.ClientConnection = &ClientConnection{}
	}
	if c.ClientConnection.QPS == nil {
		c.ClientConnection.QPS = ptr.To[float32](DefaultClientQPS)
	}
	if c.ClientConnection.Burst == nil {
		c.ClientConnection.Burst = ptr.To[int32](DefaultClientBurst)
	}
	if c.Integrations == nil {
		c.Integrations = &Integrations{}
	}
	if c.Integrations.AcceptKueueQueueLabel == nil {
		c.Integrations.AcceptKueueQueueLabel = ptr.To(true)
	}
	if c.ManagedJobsNamespaceSelector == nil {
		c.ManagedJobsNamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", *c.Namespace},
		}}}
	}
	setCertDefaults(c)
	setPodsReadyDefaults(c)
	if c.FairSharing == nil {
		c.FairSharing = &FairSharing{}
	}
	if u := c.FairSharing.Usage; u != nil && u.SamplingInterval == nil {
		u.SamplingInterval = &metav1.Duration{Duration: DefaultUsageSamplingInterval}
	}
	if c.PreemptionDelay == nil {
		c.PreemptionDelay = &metav1.Duration{Duration: DefaultPreemptionDelay}
	}
	if c.NodeFailureGracePeriod == nil {
		c.NodeFailureGracePeriod = &metav1.Duration{Duration: DefaultNodeFailureGracePeriod}
	}
	setGangDefaults(c)
	setMultiClusterDefaults(c)
}

func setMultiClusterDefaults(c *Configuration) {
	if c.MultiCluster == nil {
		c.MultiCluster = &MultiCluster{}
	}
	m := c.MultiCluster
	if m.Origin == "" {
		m.Origin = DefaultMultiClusterOrigin
	}
	if m.GCInterval == nil {
		m.GCInterval = &metav1.Duration{Duration: DefaultMultiClusterGCInterval}
	}
	if m.WorkerLostTimeout == nil {
		m.WorkerLostTimeout = &metav1.Duration{Duration: DefaultWorkerLostTimeout}
	}
	if m.Dispatcher == "" {
		m.Dispatcher = AllAtOnceDispatcher
	}
}

// GangProviders are the gang schedulers a configuration may name, and the
// schedulerName each gives the pods by default ("" keeps the pods' own).
var GangProviders = map[string]string{
	"None":          "",
	"KubeScheduler": "",
	"Volcano":       "volcano",
	"Coscheduling":  "scheduler-plugins-scheduler",
	"KAI":           "kai-scheduler",
}

func setGangDefaults(c *Configuration) {
	if c.GangScheduling == nil {
		c.GangScheduling = &GangScheduling{}
	}
	g := c.GangScheduling
	if g.Provider == "" {
		g.Provider = "None"
	}
	if g.Queue == "" {
		g.Queue = "default"
	}
	names := map[string]string{}
	for p, n := range GangProviders {
		if n != "" {
			names[p] = n
		}
	}
	for p, n := range g.SchedulerNames {
		names[p] = n
	}
	g.SchedulerNames = names
}

func setLeaderElectionDefaults(c *Configuration) {
	if c.LeaderElection == nil {
		c.LeaderElection = &LeaderElectionConfig{}
	}
	le := c.LeaderElection
	if le.LeaderElect == nil {
		le.LeaderElect = ptr.To(true)
	}
	if le.ResourceName == "" {
		le.ResourceName = DefaultLeaderElectionID
	}
	if le.ResourceNamespace == "" {
		le.ResourceNamespace = *c.Namespace
	}
	if le.LeaseDuration == nil {
		le.LeaseDuration = &metav1.Duration{Duration: 15 * time.Second}
	}
	if le.RenewDeadline == nil {
		le.RenewDeadline = &metav1.Duration{Duration: 10 * time.Second}
	}
	if le.RetryPeriod == nil {
		le.RetryPeriod = &metav1.Duration{Duration: 2 * time.Second}
	}
}

func setCertDefaults(c *Configuration) {
	if c.InternalCertManagement == nil {
		c.InternalCertManagement = &InternalCertManagement{}
	}
	icm := c.InternalCertManagement
	if icm.Enable == nil {
		icm.Enable = ptr.To(true)
	}
	if icm.WebhookServiceName == nil {
		icm.WebhookServiceName = ptr.To(DefaultWebhookServiceName)
	}
	if icm.WebhookSecretName == nil {
		icm.WebhookSecretName = ptr.To(DefaultWebhookSecretName)
	}
}

func setPodsReadyDefaults(c *Configuration) {
	if c.WaitForPodsReady == nil {
		c.WaitForPodsReady = &WaitForPodsReady{}
	}
	w := c.WaitForPodsReady
	if w.Timeout == nil {
		w.Timeout = &metav1.Duration{Duration: DefaultPodsReadyTimeout}
	}
	if w.BlockAdmission == nil {
		w.BlockAdmission = ptr.To(false)
	}
	if w.RequeuingStrategy == nil {
		w.RequeuingStrategy = &RequeuingStrategy{}
	}
	if w.RequeuingStrategy.BackoffBaseSeconds == nil {
		w.RequeuingStrategy.BackoffBaseSeconds = ptr.To[int32](DefaultBackoffBaseSeconds)
	}
	if w.RequeuingStrategy.BackoffMaxSeconds == nil {
		w.RequeuingStrategy.BackoffMaxSeconds = ptr.To[int32](DefaultBackoffMaxSeconds)
	}
	if w.RequeuingStrategy.Timestamp == nil {
		w.RequeuingStrategy.Timestamp = ptr.To(EvictionTimestamp)
	}
}
