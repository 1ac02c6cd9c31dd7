package api

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	"github.com/musterhq/muster/test/framework"
)

// injectCAFrom is the annotation that tells cert-manager's CA injector which
// Certificate's CA to put into a webhook configuration or CRD.
const injectCAFrom = "cert-manager.io/inject-ca-from"

// TestCertManagerOverlayIsValid renders config/default-certmanager, applies
// it (server-side dry run) to an API server with cert-manager's CRDs, and
// checks that the names kustomize prefixed still meet: a prefix that misses
// one reference leaves cert-manager with no Issuer, or webhooks without a CA.
func TestCertManagerOverlayIsValid(t *testing.T) {
	g := NewWithT(t)
	installCertManagerCRDs(t)
	manifests := kustomize(t, "default-certmanager")
	g.Expect(serverDryRun(t, manifests)).To(ContainSubstring("certificate.cert-manager.io/muster-serving-cert serverside-applied (server dry run)"))
	objs := decodeObjects(t, manifests)
	expectCertManagerWiring(g, objs)

	// The overlay's own copy of the component configuration differs from
	// config/default's only in leaving the certificates to cert-manager.
	want := managerConfig(t, decodeObjects(t, kustomize(t, "default")))
	want.InternalCertManagement.Enable = ptr.To(false)
	g.Expect(managerConfig(t, objs)).To(Equal(want))
}

// TestHelmChartCertManagerModeIsValid checks the chart's certs.mode
// cert-manager the same way.
func TestHelmChartCertManagerModeIsValid(t *testing.T) {
	g := NewWithT(t)
	installCertManagerCRDs(t)
	chart := filepath.Join(framework.RepoRoot(), "charts", "muster")
	manifests, err := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "helm"), "template", "muster", chart,
		"-n", "muster-system", "--set", "certs.mode=cert-manager").Output()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(serverDryRun(t, manifests)).To(ContainSubstring("certificate.cert-manager.io/muster-serving-cert serverside-applied (server dry run)"))
	objs := decodeObjects(t, manifests)
	expectCertManagerWiring(g, objs)
	g.Expect(*managerConfig(t, objs).InternalCertManagement.Enable).To(BeFalse())
}

// installCertManagerCRDs installs cert-manager's CRDs from bin/crds (`make
// cert-manager-crds`), so the API server validates Issuers and Certificates
// against cert-manager's own schema.
func installCertManagerCRDs(t *testing.T) {
	t.Helper()
	dir := framework.CRDDir("cert-manager")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("cert-manager's CRDs are not in %s: run make cert-manager-crds", dir)
	}
	if err := env.InstallCRDs(dir); err != nil {
		t.Fatal(err)
	}
}

// expectCertManagerWiring asserts what cert-manager needs of rendered
// manifests to serve Muster's webhooks: the Certificate's Issuer is rendered
// in its namespace, the Secret it writes is the one the manager mounts as
// its webhook certificate, its DNS names are those of the Service the
// webhooks call, and every webhook configuration (and CRD with a conversion
// webhook) names that Certificate for CA injection.
func expectCertManagerWiring(g Gomega, objs []*unstructured.Unstructured) {
	issuer, cert := only(g, objs, "Issuer"), only(g, objs, "Certificate")
	g.Expect(nested(cert, "spec", "issuerRef", "kind")).To(Equal("Issuer"))
	g.Expect(nested(cert, "spec", "issuerRef", "name")).To(Equal(issuer.GetName()), "the Certificate's Issuer exists")
	g.Expect(cert.GetNamespace()).To(Equal(issuer.GetNamespace()), "an Issuer serves its own namespace only")

	var deploy appsv1.Deployment
	convert(g, only(g, objs, "Deployment"), &deploy)
	g.Expect(cert.GetNamespace()).To(Equal(deploy.Namespace), "the Secret is written where the manager runs")
	g.Expect(volumeAt(&deploy, configv1beta1.DefaultWebhookCertDir)).To(HaveField("Secret.SecretName", nested(cert, "spec", "secretName")),
		"the manager mounts the Secret cert-manager writes")

	svc := webhookService(g, objs)
	dns, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	g.Expect(dns).To(ContainElement(svc.Name+"."+svc.Namespace+".svc"), "the certificate is valid for the webhook Service")
	g.Expect(only(g, objs, "Service", svc.Name)).NotTo(BeNil())

	want := cert.GetNamespace() + "/" + cert.GetName()
	var configs int
	for _, o := range objs {
		switch {
		case strings.HasSuffix(o.GetKind(), "WebhookConfiguration"):
			configs++
		case o.GetKind() == "CustomResourceDefinition" && nested(o, "spec", "conversion", "strategy") == "Webhook":
		default:
			continue
		}
		g.Expect(o.GetAnnotations()).To(HaveKeyWithValue(injectCAFrom, want), "%s %s", o.GetKind(), o.GetName())
	}
	g.Expect(configs).To(Equal(2), "a mutating and a validating webhook configuration")
}

// webhookService is the Service the webhook configurations call; they must
// all call the same one.
func webhookService(g Gomega, objs []*unstructured.Unstructured) (svc struct{ Name, Namespace string }) {
	for _, o := range objs {
		if !strings.HasSuffix(o.GetKind(), "WebhookConfiguration") {
			continue
		}
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, h := range hooks {
			s, _, _ := unstructured.NestedStringMap(h.(map[string]any), "clientConfig", "service")
			if svc.Name == "" {
				svc.Name, svc.Namespace = s["name"], s["namespace"]
			}
			g.Expect(s).To(And(HaveKeyWithValue("name", svc.Name), HaveKeyWithValue("namespace", svc.Namespace)), o.GetName())
		}
	}
	g.Expect(svc.Name).NotTo(BeEmpty())
	return svc
}

// managerConfig loads the component configuration from the ConfigMap the
// rendered Deployment mounts.
func managerConfig(t *testing.T, objs []*unstructured.Unstructured) *configv1beta1.Configuration {
	g := NewWithT(t)
	var deploy appsv1.Deployment
	convert(g, only(g, objs, "Deployment"), &deploy)
	v := volumeAt(&deploy, "/etc/muster")
	g.Expect(v).To(HaveField("ConfigMap", Not(BeNil())), "the configuration is mounted from a ConfigMap")
	var cm corev1.ConfigMap
	convert(g, only(g, objs, "ConfigMap", v.ConfigMap.Name), &cm)
	file := filepath.Join(t.TempDir(), "config.yaml")
	g.Expect(os.WriteFile(file, []byte(cm.Data["config.yaml"]), 0o600)).To(Succeed())
	cfg, err := configv1beta1.Load(file)
	g.Expect(err).NotTo(HaveOccurred())
	return cfg
}

// volumeAt is the volume the manager container mounts at path, or nil.
func volumeAt(d *appsv1.Deployment, path string) *corev1.VolumeSource {
	spec := d.Spec.Template.Spec
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			if c.Name != "manager" || m.MountPath != path {
				continue
			}
			for _, v := range spec.Volumes {
				if v.Name == m.Name {
					return &v.VolumeSource
				}
			}
		}
	}
	return nil
}

// only returns the one rendered object of a kind (and name, if given).
func only(g Gomega, objs []*unstructured.Unstructured, kind string, name ...string) *unstructured.Unstructured {
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && (len(name) == 0 || o.GetName() == name[0]) {
			found = append(found, o)
		}
	}
	g.Expect(found).To(HaveLen(1), "one %s %v", kind, name)
	return found[0]
}

func nested(o *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(o.Object, path...)
	return s
}

func convert(g Gomega, o *unstructured.Unstructured, into any) {
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into)).To(Succeed())
}

// kustomize renders a directory of config/ as users install it.
func kustomize(t *testing.T, dir string) []byte {
	t.Helper()
	return kustomizePath(t, filepath.Join(framework.RepoRoot(), "config", dir))
}

func kustomizePath(t *testing.T, dir string) []byte {
	t.Helper()
	out, err := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"), "kustomize", dir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	return out
}

// serverDryRun applies manifests with server-side apply, dry run, into the
// API server (creating muster-system first) and returns kubectl's output.
func serverDryRun(t *testing.T, manifests []byte) string {
	t.Helper()
	return serverDryRunIn(t, "muster-system", manifests)
}

// serverDryRunIn is serverDryRun for manifests installed into namespace.
func serverDryRunIn(t *testing.T, namespace string, manifests []byte) string {
	t.Helper()
	g := NewWithT(t)
	kubeconfig, err := env.KubeConfig()
	g.Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(path, kubeconfig, 0o600)).To(Succeed())
	ns := &corev1.Namespace{}
	ns.Name = namespace
	if err := env.Client.Create(context.Background(), ns); err != nil {
		g.Expect(err).To(MatchError(ContainSubstring("already exists")))
	}
	apply := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"), "--kubeconfig", path,
		"apply", "--server-side", "--dry-run=server", "-f", "-")
	apply.Stdin = strings.NewReader(string(manifests))
	out, err := apply.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	return string(out)
}
