// Package certs tests Muster's internal certificate management: the CA and
// serving certificate are generated into a Secret, written where the
// webhook server reads them, and the CA is injected into the webhook
// configurations; only then do the webhooks start.
package certs

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	"github.com/musterhq/muster/cmd/muster/app"
	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{}, &env, false) }

func TestInternalCertManagement(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const ns = "muster-system"
	mutating, validating, err := framework.KustomizeWebhooks(filepath.Join(framework.RepoRoot(), "config", "webhook"))
	g.Expect(err).NotTo(HaveOccurred())
	mutating[0].Name, validating[0].Name = app.MutatingWebhookConfigurationName, app.ValidatingWebhookConfigurationName
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: configv1beta1.DefaultWebhookSecretName, Namespace: ns}}
	env.CreateAll(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, secret, mutating[0], validating[0])

	certDir := t.TempDir()
	mgr := env.StartManager(t, func(c *configv1beta1.Configuration) {
		c.Namespace = ptr.To(ns)
		c.InternalCertManagement.Enable = ptr.To(true)
		c.Webhook.CertDir = certDir
		// The visibility API on, but its APIService not installed yet: the
		// webhooks must start all the same.
		c.Visibility.BindAddress = fmt.Sprintf("127.0.0.1:%d", framework.FreePort())
	})

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
		g.Expect(secret.Data).To(HaveKey("ca.crt"))
		g.Expect(secret.Data).To(HaveKey("tls.crt"))
		g.Expect(secret.Data).To(HaveKey("tls.key"))
	}, framework.Timeout, framework.Interval).Should(Succeed(), "certificates generated into the Secret")
	g.Eventually(func(g Gomega) {
		for _, w := range mutatingHooks(g) {
			g.Expect(w).To(Equal(secret.Data["ca.crt"]))
		}
		for _, w := range validatingHooks(g) {
			g.Expect(w).To(Equal(secret.Data["ca.crt"]))
		}
	}, framework.Timeout, framework.Interval).Should(Succeed(), "CA injected into every webhook")
	g.Eventually(func() error {
		_, err := os.Stat(filepath.Join(certDir, "tls.crt"))
		return err
	}, framework.Timeout, framework.Interval).Should(Succeed(), "serving certificate written for the webhook server")
	g.Eventually(func() error {
		return mgr.GetWebhookServer().StartedChecker()(&http.Request{})
	}, framework.Timeout, framework.Interval).Should(Succeed(), "webhook server started once the certificates were ready")

	// The visibility APIService, installed later, gets the same CA.
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": app.VisibilityAPIServiceName},
		"spec": map[string]any{"group": "visibility.muster.dev", "version": "v1beta1", "groupPriorityMinimum": int64(100),
			"versionPriority": int64(100), "service": map[string]any{"name": "muster-webhook-service", "namespace": ns, "port": int64(8082)}},
	}}
	env.CreateAll(t, apiService)
	wantCA := base64.StdEncoding.EncodeToString(secret.Data["ca.crt"])
	g.Eventually(func(g Gomega) string {
		return caBundle(g, apiService)
	}, framework.Timeout, framework.Interval).Should(Equal(wantCA), "CA injected into the visibility APIService")

	// Re-applying the manifest (which has no caBundle) empties it: the
	// change itself brings the CA back, without waiting for a resync. The
	// aggregator writes the APIService's status meanwhile: a conflict is
	// read again.
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := apiService.DeepCopy()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(apiService), got); err != nil {
			return err
		}
		unstructured.RemoveNestedField(got.Object, "spec", "caBundle")
		return env.Client.Update(ctx, got)
	})).To(Succeed())
	g.Eventually(func(g Gomega) string {
		return caBundle(g, apiService)
	}, framework.Timeout, framework.Interval).Should(Equal(wantCA), "CA injected again after the APIService was re-applied")
}

func caBundle(g Gomega, apiService *unstructured.Unstructured) string {
	got := apiService.DeepCopy()
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(apiService), got)).To(Succeed())
	ca, _, _ := unstructured.NestedString(got.Object, "spec", "caBundle")
	return ca
}

func mutatingHooks(g Gomega) [][]byte {
	var m admissionregistrationv1.MutatingWebhookConfiguration
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: app.MutatingWebhookConfigurationName}, &m)).To(Succeed())
	var out [][]byte
	for _, w := range m.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	return out
}

func validatingHooks(g Gomega) [][]byte {
	var v admissionregistrationv1.ValidatingWebhookConfiguration
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: app.ValidatingWebhookConfigurationName}, &v)).To(Succeed())
	var out [][]byte
	for _, w := range v.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	return out
}
