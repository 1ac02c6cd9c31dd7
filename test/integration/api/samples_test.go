package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// TestSamplesAreAccepted creates every object of config/samples.
func TestSamplesAreAccepted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples found: %v", err)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			g := NewWithT(t)
			for _, obj := range readObjects(t, f) {
				g.Expect(env.Client.Create(context.Background(), obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
				t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
			}
		})
	}
}

// TestPrinterColumns asserts the columns that answer "admitted? where? why
// not?" are in the installed CRDs.
func TestPrinterColumns(t *testing.T) {
	want := map[string][]string{
		"workloads.muster.dev":     {"Queue", "Reserved in", "Admitted", "Finished", "Age"},
		"clusterqueues.muster.dev": {"Cohort", "Pending", "Admitted"},
		"localqueues.muster.dev":   {"ClusterQueue", "Pending", "Admitted"},
	}
	for name, cols := range want {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			var crd apiextensionsv1.CustomResourceDefinition
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &crd)).To(Succeed())
			var got []string
			for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
				if c.Priority == 0 {
					got = append(got, c.Name)
				}
			}
			g.Expect(got).To(ContainElements(cols))
		})
	}
}

// TestKubectlGetShowsColumns runs kubectl get against the API server.
func TestKubectlGetShowsColumns(t *testing.T) {
	g := NewWithT(t)
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl not built: run make envtest-assets")
	}
	kubeconfig, err := env.KubeConfig()
	g.Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(path, kubeconfig, 0o600)).To(Succeed())

	for _, f := range []string{"resourceflavors.yaml", "clusterqueues.yaml", "localqueues.yaml"} {
		for _, obj := range readObjects(t, filepath.Join(framework.RepoRoot(), "config", "samples", f)) {
			g.Expect(env.Client.Create(context.Background(), obj)).To(Succeed())
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
		}
	}
	cases := map[string][]string{
		"cq": {"NAME", "COHORT", "PENDING", "ADMITTED", "team-a", "research"},
		"lq": {"NAME", "CLUSTERQUEUE", "PENDING", "ADMITTED", "team-b"},
		"rf": {"NAME", "AGE", "a100", "h100"},
	}
	for resource, want := range cases {
		out, err := exec.Command(kubectl, "--kubeconfig", path, "get", resource, "-A").CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), string(out))
		for _, w := range want {
			g.Expect(string(out)).To(ContainSubstring(w), "kubectl get %s", resource)
		}
	}

	ns := env.NewNamespace(t, "kubectl", nil)
	wl := builder.MakeWorkload("shown", ns).Queue("nowhere").Obj()
	g.Expect(env.Client.Create(context.Background(), wl)).To(Succeed())
	out, err := exec.Command(kubectl, "--kubeconfig", path, "get", "wl", "-n", ns, "-o", "wide").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	header := strings.Fields(strings.SplitN(string(out), "\n", 2)[0])
	g.Expect(strings.Join(header, " ")).To(Equal("NAME QUEUE RESERVED IN ADMITTED FINISHED AGE PRIORITY DOMAIN CLUSTER CHECKS MESSAGE"))
	g.Eventually(func() string {
		out, _ := exec.Command(kubectl, "--kubeconfig", path, "get", "wl", "-n", ns, "-o", "wide").CombinedOutput()
		return string(out)
	}, framework.Timeout, framework.Interval).Should(ContainSubstring("LocalQueue nowhere doesn't exist"), "the wide view says why it waits")
}

func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeObjects(t, data)
}

// decodeObjects splits a multi-document YAML stream into objects.
func decodeObjects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("decoding manifests: %v", err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// TestDefaultKustomizationIsValid: everything config/default installs is
// accepted by the API server (server-side dry run).
func TestDefaultKustomizationIsValid(t *testing.T) {
	out := serverDryRun(t, kustomize(t, "default"))
	NewWithT(t).Expect(out).To(ContainSubstring("deployment.apps/muster-controller-manager serverside-applied (server dry run)"))
}

// TestHelmChartIsValid: the chart renders in both certificate modes, its
// objects are accepted by the API server (server-side dry run), and the
// component configuration it renders loads and validates.
func TestHelmChartIsValid(t *testing.T) {
	g := NewWithT(t)
	chart := filepath.Join(framework.RepoRoot(), "charts", "muster")
	render := func(args ...string) []byte {
		out, err := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "helm"), append([]string{"template", "muster", chart, "-n", "muster-system"}, args...)...).Output()
		g.Expect(err).NotTo(HaveOccurred(), "helm template %v", args)
		return out
	}
	g.Expect(string(render("--set", "certs.mode=cert-manager"))).To(ContainSubstring("kind: Certificate"))
	manifests := render("--set", "fairSharing.enable=true", "--set", "replicas=3")
	serverDryRun(t, manifests)
	cfg := managerConfig(t, decodeObjects(t, manifests))
	g.Expect(cfg.FairSharing.Enable).To(BeTrue())
	g.Expect(*cfg.InternalCertManagement.Enable).To(BeTrue())
	g.Expect(*cfg.Metrics.SecureServing).To(BeTrue())
}

// TestHelmChartInstallsIntoItsReleaseNamespace: rendered for another
// namespace, every object the chart installs is there or points there (the
// webhooks' and the APIService's Service, RBAC subjects, the manager's own
// namespace), the API server accepts them, and the visibility API and the
// dashboard are turned on and off by their values.
func TestHelmChartInstallsIntoItsReleaseNamespace(t *testing.T) {
	g := NewWithT(t)
	chart := filepath.Join(framework.RepoRoot(), "charts", "muster")
	render := func(args ...string) []byte {
		out, err := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "helm"),
			append([]string{"template", "muster", chart, "-n", "ml-platform"}, args...)...).Output()
		g.Expect(err).NotTo(HaveOccurred(), "helm template %v", args)
		return out
	}
	manifests := render()
	serverDryRunIn(t, "ml-platform", manifests)
	for _, line := range strings.Split(string(manifests), "\n") {
		if strings.Contains(line, "muster-system") {
			g.Expect(line).To(MatchRegexp(`^\s*values: \[.*muster-system.*\]$|^\s*- muster-system$`),
				"only the default managedJobsNamespaceSelector may name muster-system")
		}
	}
	objs := decodeObjects(t, manifests)
	for _, o := range objs {
		if o.GetNamespace() != "" {
			g.Expect(o.GetNamespace()).To(BeElementOf("ml-platform", "kube-system"), "%s %s", o.GetKind(), o.GetName())
		}
	}
	for _, o := range objs {
		if strings.HasSuffix(o.GetKind(), "WebhookConfiguration") {
			hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
			for _, h := range hooks {
				ns, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "namespace")
				g.Expect(ns).To(Equal("ml-platform"), "%s %s", o.GetKind(), o.GetName())
			}
		}
	}
	withCertManager := string(render("--set", "certs.mode=cert-manager"))
	g.Expect(withCertManager).To(ContainSubstring("muster-webhook-service.ml-platform.svc"))
	g.Expect(withCertManager).To(ContainSubstring("cert-manager.io/inject-ca-from: ml-platform/muster-serving-cert"))
	cfg := managerConfig(t, objs)
	g.Expect(*cfg.Namespace).To(Equal("ml-platform"))
	g.Expect(cfg.Visibility.BindAddress).To(Equal(":8082"))
	g.Expect(cfg.Dashboard.BindAddress).To(Equal("0"))
	g.Expect(string(manifests)).To(ContainSubstring("kind: APIService"))

	off := render("--set", "visibility.enable=false", "--set", "dashboard.enable=true")
	g.Expect(string(off)).NotTo(ContainSubstring("kind: APIService"))
	cfg = managerConfig(t, decodeObjects(t, off))
	g.Expect(cfg.Visibility.BindAddress).To(Equal("0"))
	g.Expect(cfg.Dashboard.BindAddress).To(Equal(":8083"))
}
