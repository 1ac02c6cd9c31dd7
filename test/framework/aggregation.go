package framework

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
)

// frontProxyArgs makes a front-proxy CA and client certificate in dir and
// returns the kube-apiserver flags that use them: with them the API server
// proxies aggregated APIs with a client certificate the extension server
// trusts, naming the user in X-Remote-User (what kubeadm sets up; envtest
// does not).
func frontProxyArgs(dir string) (map[string]string, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "front-proxy-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "front-proxy-client"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	files := map[string]*pem.Block{
		"front-proxy-ca.crt":     {Type: "CERTIFICATE", Bytes: caDER},
		"front-proxy-client.crt": {Type: "CERTIFICATE", Bytes: der},
		"front-proxy-client.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	}
	for name, block := range files {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			return nil, err
		}
	}
	return map[string]string{
		"requestheader-client-ca-file":       filepath.Join(dir, "front-proxy-ca.crt"),
		"requestheader-allowed-names":        "front-proxy-client",
		"requestheader-username-headers":     "X-Remote-User",
		"requestheader-group-headers":        "X-Remote-Group",
		"requestheader-extra-headers-prefix": "X-Remote-Extra-",
		"proxy-client-cert-file":             filepath.Join(dir, "front-proxy-client.crt"),
		"proxy-client-key-file":              filepath.Join(dir, "front-proxy-client.key"),
	}, nil
}

// VisibilityAPIService is the APIService the tests register.
const VisibilityAPIService = "v1beta1.visibility.muster.dev"

// RegisterVisibility registers visibility.muster.dev with the API server,
// served by a manager in this process at 127.0.0.1:port: an ExternalName
// Service for localhost (no kube-proxy here; the aggregator dials the name
// at the APIService's port), and the APIService, whose certificate is
// envtest's and so not checked. It waits until the API server finds the
// API available.
func (e *Env) RegisterVisibility(ctx context.Context, port int) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "muster-system"}}
	if err := e.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "muster-visibility", Namespace: ns.Name},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}
	if err := e.Client.Create(ctx, svc); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": VisibilityAPIService},
		"spec": map[string]any{
			"group": "visibility.muster.dev", "version": "v1beta1",
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
			"insecureSkipTLSVerify": true,
			"service":               map[string]any{"name": svc.Name, "namespace": ns.Name, "port": int64(port)},
		},
	}}
	if err := e.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(apiService), client.FieldOwner("muster-tests"), client.ForceOwnership); err != nil {
		return err
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &unstructured.Unstructured{}
		got.SetAPIVersion("apiregistration.k8s.io/v1")
		got.SetKind("APIService")
		if err := e.Client.Get(ctx, client.ObjectKey{Name: VisibilityAPIService}, got); err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Available" {
				last = fmt.Sprintf("%v: %v", m["reason"], m["message"])
				return m["status"] == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("APIService %s not available (%s): %w", VisibilityAPIService, last, err)
	}
	return nil
}

// StartManagerWithVisibility starts a manager (TestConfig, changed by
// mutate) serving the visibility API on a free port, and registers that API
// with the API server (RegisterVisibility). The caller stops the manager.
func (e *Env) StartManagerWithVisibility(ctx context.Context, mutate ...func(*configv1beta1.Configuration)) (*Manager, error) {
	port := freePort()
	mutate = append([]func(*configv1beta1.Configuration){func(c *configv1beta1.Configuration) {
		c.Visibility.BindAddress = fmt.Sprintf("127.0.0.1:%d", port)
	}}, mutate...)
	m, err := e.StartManagerE(mutate...)
	if err != nil {
		return nil, err
	}
	if err := e.RegisterVisibility(ctx, port); err != nil {
		_ = m.StopE()
		return nil, err
	}
	return m, nil
}

// ServiceAccountToken creates a ServiceAccount in namespace and returns a
// fresh token of it, as the kubelet mounts one (for endpoints that take
// bearer tokens: /metrics, the dashboard).
func (e *Env) ServiceAccountToken(t testing.TB, namespace, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if err := e.Client.Create(context.Background(), sa); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}
