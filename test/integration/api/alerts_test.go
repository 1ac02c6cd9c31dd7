package api

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/musterhq/muster/controllers/metrics"
	"github.com/musterhq/muster/test/framework"
)

// TestAlertsAndDashboard: config/prometheus's PrometheusRule is valid for
// the Prometheus Operator's CRD (server-side dry run), the chart renders
// the same rules and the same dashboard, and every muster_ metric they
// read is one the manager exports: a renamed metric breaks this test, not
// an admin's alert.
func TestAlertsAndDashboard(t *testing.T) {
	g := NewWithT(t)
	g.Expect(env.InstallCRDs(framework.CRDDir("prometheus"))).To(Succeed())
	rendered := kustomizeAsDefault(t, "prometheus")
	g.Expect(serverDryRun(t, rendered)).To(ContainSubstring("prometheusrule.monitoring.coreos.com/muster-alerts serverside-applied (server dry run)"))
	rule := only(g, decodeObjects(t, rendered), "PrometheusRule")

	chart, err := exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "helm"), "template", "muster",
		filepath.Join(framework.RepoRoot(), "charts", "muster"), "-n", "muster-system",
		"--set", "metrics.prometheusRule.enable=true", "--set", "metrics.grafanaDashboard.enable=true").Output()
	g.Expect(err).NotTo(HaveOccurred())
	objs := decodeObjects(t, chart)
	g.Expect(only(g, objs, "PrometheusRule").Object["spec"]).To(Equal(rule.Object["spec"]), "the chart alerts as config/prometheus does")

	dashboard, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "prometheus", "grafana-dashboard.json"))
	g.Expect(err).NotTo(HaveOccurred())
	var want, got any
	g.Expect(json.Unmarshal(dashboard, &want)).To(Succeed())
	cm := only(g, objs, "ConfigMap", "muster-grafana-dashboard")
	data, _, _ := unstructured.NestedString(cm.Object, "data", "muster.json")
	g.Expect(json.Unmarshal([]byte(data), &got)).To(Succeed())
	g.Expect(got).To(Equal(want), "the chart's dashboard is config/prometheus's")

	exported := map[string]bool{}
	for _, n := range metrics.Names() {
		exported[n] = true
	}
	rules, err := json.Marshal(rule.Object["spec"])
	g.Expect(err).NotTo(HaveOccurred())
	used := regexp.MustCompile(`muster_[a-z_]+`).FindAllString(string(rules)+string(dashboard), -1)
	g.Expect(used).NotTo(BeEmpty())
	for _, name := range used {
		base := name
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			base = strings.TrimSuffix(base, suffix)
		}
		g.Expect(exported).To(HaveKey(base), "%s is read by an alert or the dashboard but not exported", name)
	}
}
