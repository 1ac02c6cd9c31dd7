package app

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
)

// Names of the webhook configurations and the visibility APIService as
// config/default installs them; the certificate rotator injects the CA
// bundle into each.
const (
	MutatingWebhookConfigurationName   = "muster-mutating-webhook-configuration"
	ValidatingWebhookConfigurationName = "muster-validating-webhook-configuration"
	VisibilityAPIServiceName           = "v1beta1.visibility.muster.dev"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=update,resourceNames=muster-webhook-server-cert
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=update,resourceNames=muster-mutating-webhook-configuration;muster-validating-webhook-configuration
// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,verbs=update,resourceNames=v1beta1.visibility.muster.dev

// setupCerts registers the webhooks, and the readiness check that says the
// webhook server answers. With internal certificate management it first
// lets cert-controller create and rotate the CA and serving certificate
// (stored in a Secret, CA injected into the webhook configurations); the
// webhooks, and so the webhook server, start once the certificates are on
// disk, and the replica is not ready before. The returned channel is
// closed once the certificate files are there (at once without internal
// management): the visibility API server, which serves the same
// certificate, starts then.
func setupCerts(mgr manager.Manager, cfg *configv1beta1.Configuration, setupWebhooks func() error) (<-chan struct{}, error) {
	icm := cfg.InternalCertManagement
	ready := make(chan struct{})
	if !*icm.Enable {
		close(ready)
		if err := setupWebhooks(); err != nil {
			return nil, err
		}
		return ready, mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker())
	}
	webhooks := []rotator.WebhookInfo{
		{Name: MutatingWebhookConfigurationName, Type: rotator.Mutating},
		{Name: ValidatingWebhookConfigurationName, Type: rotator.Validating},
	}
	err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: *cfg.Namespace, Name: *icm.WebhookSecretName},
		CertDir:        cfg.Webhook.CertDir,
		CAName:         "muster-ca",
		CAOrganization: "muster",
		DNSName:        fmt.Sprintf("%s.%s.svc", *icm.WebhookServiceName, *cfg.Namespace),
		ExtraDNSNames:  []string{fmt.Sprintf("%s.%s.svc.cluster.local", *icm.WebhookServiceName, *cfg.Namespace)},
		IsReady:        ready,
		Webhooks:       webhooks,
		// Every replica serves webhooks, so every replica needs the files.
		RequireLeaderElection: false,
	})
	if err != nil {
		return nil, fmt.Errorf("setting up certificate rotation: %w", err)
	}
	sync, err := newCertSync(mgr, types.NamespacedName{Namespace: *cfg.Namespace, Name: *icm.WebhookSecretName}, cfg.Webhook.CertDir, visibilityEnabled(cfg))
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(sync); err != nil {
		return nil, err
	}
	var serving atomic.Bool
	go func() {
		<-ready
		log := ctrl.Log.WithName("certs")
		if err := setupWebhooks(); err != nil {
			log.Error(err, "Unable to set up the webhooks")
			return
		}
		serving.Store(true)
		log.Info("Started webhooks after the certificates were ready")
	}()
	return ready, mgr.AddReadyzCheck("webhook", func(req *http.Request) error {
		if !serving.Load() {
			return fmt.Errorf("webhook certificates are not ready yet")
		}
		return mgr.GetWebhookServer().StartedChecker()(req)
	})
}
