package app

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	content := "apiVersion: config.muster.dev/v1beta1\nkind: Configuration\n" + yaml
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConfigDefaultsTheFrameworksFromTheRegistry(t *testing.T) {
	g := NewWithT(t)
	cfg, err := LoadConfig("")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Integrations.Frameworks).To(Equal([]string{"batch/job", "kubeflow.org/pytorchjob", "ray.io/raycluster"}))

	cfg, err = LoadConfig(writeConfig(t, "integrations:\n  frameworks: [ray.io/raycluster]\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Integrations.Frameworks).To(Equal([]string{"ray.io/raycluster"}))
}

func TestLoadConfigRefusesAnUnknownFramework(t *testing.T) {
	g := NewWithT(t)
	_, err := LoadConfig(writeConfig(t, "integrations:\n  frameworks: [argo/workflow]\n"))
	g.Expect(err).To(MatchError(ContainSubstring(`invalid config: integrations.frameworks[0]: Unsupported value: "argo/workflow"`)))
}

func TestLoadConfigStillValidatesTheRest(t *testing.T) {
	g := NewWithT(t)
	_, err := LoadConfig(writeConfig(t, "clientConnection:\n  qps: -1\n"))
	g.Expect(err).To(MatchError(ContainSubstring("clientConnection.qps")))
}
