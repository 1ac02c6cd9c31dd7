package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	secret := types.NamespacedName{Namespace: *cfg.Namespace, Name: *icm.WebhookSecretName}
	if err := mgr.Add(&certFiles{reader: mgr.GetAPIReader(), key: secret, dir: cfg.Webhook.CertDir}); err != nil {
		return nil, err
	}
	if visibilityEnabled(cfg) {
		if err := mgr.Add(&apiServiceCA{client: mgr.GetClient(), reader: mgr.GetAPIReader(), secret: secret, name: VisibilityAPIServiceName}); err != nil {
			return nil, err
		}
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

// certFiles copies the serving certificate from its Secret to the webhook
// server's certificate directory, as the kubelet does for a mounted Secret.
// In a pod the directory is that mount (read-only, and the copy is not
// needed); outside a cluster (a manager run locally) this is what makes the
// rotated certificate reach the server.
type certFiles struct {
	reader client.Reader
	key    types.NamespacedName
	dir    string
}

// NeedLeaderElection is false: every replica serves webhooks.
func (c *certFiles) NeedLeaderElection() bool { return false }

func (c *certFiles) Start(ctx context.Context) error {
	log := ctrl.Log.WithName("certs")
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		var secret corev1.Secret
		if err := c.reader.Get(ctx, c.key, &secret); err != nil {
			return
		}
		for _, name := range []string{"tls.crt", "tls.key"} {
			data := secret.Data[name]
			path := filepath.Join(c.dir, name)
			if len(data) == 0 {
				continue
			}
			if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
				continue
			}
			if err := os.MkdirAll(c.dir, 0o700); err != nil {
				log.V(2).Info("Skipped writing certificates", "dir", c.dir, "error", err.Error())
				return
			}
			if err := writeFileAtomic(path, data); err != nil {
				log.V(2).Info("Skipped writing certificates (a mounted Secret?)", "dir", c.dir, "error", err.Error())
				return
			}
			log.Info("Wrote webhook certificate file", "path", path)
		}
	}, 2*time.Second)
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// apiServiceCA keeps the visibility APIService's caBundle the CA of the
// rotated certificate. It is not one of the rotator's webhooks on purpose:
// the rotator reports ready only once every CA is injected, and a cluster
// without the APIService (visibility not installed, or deleted) must not
// keep the webhooks from starting. An APIService that does not exist is
// skipped, and looked for again every interval.
type apiServiceCA struct {
	client client.Client
	reader client.Reader
	secret types.NamespacedName
	name   string
}

// NeedLeaderElection is false: every replica may fix it; the write is
// idempotent.
func (a *apiServiceCA) NeedLeaderElection() bool { return false }

func (a *apiServiceCA) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, a.sync, 10*time.Second)
	return nil
}

func (a *apiServiceCA) sync(ctx context.Context) {
	var secret corev1.Secret
	if err := a.reader.Get(ctx, a.secret, &secret); err != nil || len(secret.Data["ca.crt"]) == 0 {
		return
	}
	svc := &unstructured.Unstructured{}
	svc.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"})
	if err := a.reader.Get(ctx, types.NamespacedName{Name: a.name}, svc); err != nil {
		return
	}
	ca := base64.StdEncoding.EncodeToString(secret.Data["ca.crt"])
	if got, _, _ := unstructured.NestedString(svc.Object, "spec", "caBundle"); got == ca {
		return
	}
	if err := unstructured.SetNestedField(svc.Object, ca, "spec", "caBundle"); err != nil {
		return
	}
	if err := a.client.Update(ctx, svc); err != nil {
		ctrl.Log.WithName("certs").Info("Could not inject the CA into the visibility APIService; retrying", "apiService", a.name, "error", err.Error())
		return
	}
	ctrl.Log.WithName("certs").Info("Injected the CA into the visibility APIService", "apiService", a.name)
}
