package api

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/musterhq/muster/test/framework"
)

// TestPrometheusMonitorIsValid applies config/prometheus, as config/default
// would with ../prometheus added, to an API server with the Prometheus
// Operator's ServiceMonitor CRD (server-side dry run), and checks that it
// scrapes what the manager serves: HTTPS, with Prometheus's bearer token,
// on the metrics Service's port, which reaches the port the manager binds;
// and that the chart's ServiceMonitor is the same.
func TestPrometheusMonitorIsValid(t *testing.T) {
	g := NewWithT(t)
	dir := framework.CRDDir("prometheus")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the ServiceMonitor CRD is not in %s: run make prometheus-crds", dir)
	}
	g.Expect(env.InstallCRDs(dir)).To(Succeed())
	monitor := kustomizeAsDefault(t, "prometheus")
	g.Expect(serverDryRun(t, monitor)).To(ContainSubstring("servicemonitor.monitoring.coreos.com/muster-controller-manager-metrics-monitor serverside-applied (server dry run)"))

	sm := only(g, decodeObjects(t, monitor), "ServiceMonitor")
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	g.Expect(endpoints).To(HaveLen(1))
	ep := endpoints[0].(map[string]any)
	g.Expect(ep).To(HaveKeyWithValue("scheme", "https"))
	g.Expect(ep).To(HaveKeyWithValue("bearerTokenFile", "/var/run/secrets/kubernetes.io/serviceaccount/token"))
	g.Expect(ep).To(HaveKeyWithValue("tlsConfig", HaveKeyWithValue("insecureSkipVerify", true)))

	chart, err := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "helm"), "template", "muster",
		filepath.Join(framework.RepoRoot(), "charts", "muster"), "-n", "muster-system", "--set", "metrics.serviceMonitor.enable=true").Output()
	g.Expect(err).NotTo(HaveOccurred())
	serverDryRun(t, chart)
	g.Expect(only(g, decodeObjects(t, chart), "ServiceMonitor").Object["spec"]).To(Equal(sm.Object["spec"]), "the chart scrapes as config/prometheus does")

	objs := decodeObjects(t, kustomize(t, "default"))
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	var svc corev1.Service
	convert(g, only(g, objs, "Service", "muster-controller-manager-metrics-service"), &svc)
	g.Expect(svc.Labels).To(Equal(selector), "the monitor selects the metrics Service")
	g.Expect(svc.Spec.Ports).To(ContainElement(HaveField("Name", ep["port"])))
	var deploy appsv1.Deployment
	convert(g, only(g, objs, "Deployment"), &deploy)
	g.Expect(svc.Spec.Selector).To(Equal(deploy.Spec.Selector.MatchLabels))
	_, bound, err := net.SplitHostPort(managerConfig(t, objs).Metrics.BindAddress)
	g.Expect(err).NotTo(HaveOccurred())
	port, err := strconv.Atoi(bound)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(deploy.Spec.Template.Spec.Containers[0].Ports).To(ContainElement(And(
		HaveField("Name", svc.Spec.Ports[0].TargetPort.String()), HaveField("ContainerPort", BeEquivalentTo(port)))),
		"the Service's target port is the one the manager binds")
}

// kustomizeAsDefault renders a directory of config/ with config/default's
// namespace and name prefix, as if config/default listed it.
func kustomizeAsDefault(t *testing.T, dir string) []byte {
	t.Helper()
	tmp := t.TempDir()
	rel, err := filepath.Rel(tmp, filepath.Join(framework.RepoRoot(), "config", dir))
	if err != nil {
		t.Fatal(err)
	}
	k := "namespace: muster-system\nnamePrefix: muster-\nresources:\n- " + rel + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "kustomization.yaml"), []byte(k), 0o600); err != nil {
		t.Fatal(err)
	}
	return kustomizePath(t, tmp)
}
