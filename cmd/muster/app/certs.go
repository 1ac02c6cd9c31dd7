package app

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
)

// Names of the webhook configurations as config/default installs them; the
// certificate rotator injects the CA bundle into both.
const (
	MutatingWebhookConfigurationName   = "muster-mutating-webhook-configuration"
	ValidatingWebhookConfigurationName = "muster-validating-webhook-configuration"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=update,resourceNames=muster-webhook-server-cert
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=update,resourceNames=muster-mutating-webhook-configuration;muster-validating-webhook-configuration

// setupCerts registers the webhooks, and the readiness check that says the
// webhook server answers. With internal certificate management it first
// lets cert-controller create and rotate the CA and serving certificate
// (stored in a Secret, CA injected into the webhook configurations); the
// webhooks, and so the webhook server, start once the certificates are on
// disk, and the replica is not ready before.
func setupCerts(mgr manager.Manager, cfg *configv1beta1.Configuration, setupWebhooks func() error) error {
	icm := cfg.InternalCertManagement
	if !*icm.Enable {
		if err := setupWebhooks(); err != nil {
			return err
		}
		return mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker())
	}
	ready := make(chan struct{})
	err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: *cfg.Namespace, Name: *icm.WebhookSecretName},
		CertDir:        cfg.Webhook.CertDir,
		CAName:         "muster-ca",
		CAOrganization: "muster",
		DNSName:        fmt.Sprintf("%s.%s.svc", *icm.WebhookServiceName, *cfg.Namespace),
		ExtraDNSNames:  []string{fmt.Sprintf("%s.%s.svc.cluster.local", *icm.WebhookServiceName, *cfg.Namespace)},
		IsReady:        ready,
		Webhooks: []rotator.WebhookInfo{
			{Name: MutatingWebhookConfigurationName, Type: rotator.Mutating},
			{Name: ValidatingWebhookConfigurationName, Type: rotator.Validating},
		},
		// Every replica serves webhooks, so every replica needs the files.
		RequireLeaderElection: false,
	})
	if err != nil {
		return fmt.Errorf("setting up certificate rotation: %w", err)
	}
	if err := mgr.Add(&certFiles{reader: mgr.GetAPIReader(), key: types.NamespacedName{Namespace: *cfg.Namespace, Name: *icm.WebhookSecretName},
		dir: cfg.Webhook.CertDir}); err != nil {
		return err
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
	return mgr.AddReadyzCheck("webhook", func(req *http.Request) error {
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
