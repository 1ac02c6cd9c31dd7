package manager

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/musterhq/muster/test/framework"
)

// TestBinaryStartsReadyAndStopsOnSIGTERM runs cmd/muster with a config file
// and a kubeconfig, waits for /readyz, sends SIGTERM and expects exit 0.
func TestBinaryStartsReadyAndStopsOnSIGTERM(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "muster")
	build := exec.Command("go", "build", "-o", bin, "./cmd/muster")
	build.Dir = framework.RepoRoot()
	out, err := build.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))

	kubeconfig, err := env.KubeConfig()
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfigPath := filepath.Join(dir, "kubeconfig")
	g.Expect(os.WriteFile(kubeconfigPath, kubeconfig, 0o600)).To(Succeed())

	wh := env.WebhookOptions()
	probe := freeAddr(t)
	config := fmt.Sprintf(`apiVersion: config.muster.dev/v1beta1
kind: Configuration
namespace: default
health:
  healthProbeBindAddress: %s
metrics:
  bindAddress: "0"
webhook:
  host: %s
  port: %d
  certDir: %s
leaderElection:
  leaderElect: true
  resourceNamespace: default
internalCertManagement:
  enable: false
`, probe, wh.LocalServingHost, wh.LocalServingPort, wh.LocalServingCertDir)
	configPath := filepath.Join(dir, "config.yaml")
	g.Expect(os.WriteFile(configPath, []byte(config), 0o600)).To(Succeed())

	var logs bytes.Buffer
	cmd := exec.Command(bin, "--config", configPath, "--kubeconfig", kubeconfigPath)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	g.Expect(cmd.Start()).To(Succeed())
	defer func() { _ = cmd.Process.Kill() }()

	g.Eventually(func() (int, error) {
		resp, err := http.Get("http://" + probe + "/readyz")
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}, 30*time.Second, 100*time.Millisecond).Should(Equal(http.StatusOK), func() string { return logs.String() })

	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		g.Expect(err).NotTo(HaveOccurred(), logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("manager did not exit within 30s of SIGTERM:\n%s", logs.String())
	}
	g.Expect(logs.String()).To(ContainSubstring("Manager stopped"))
}

// TestBinaryRejectsInvalidConfig expects a clear error for a bad config file.
func TestBinaryRejectsInvalidConfig(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	configPath := filepath.Join(dir, "config.yaml")
	g.Expect(os.WriteFile(configPath, []byte("apiVersion: config.muster.dev/v1beta1\nkind: Configuration\nclientConnection:\n  qps: -1\n"), 0o600)).To(Succeed())
	cmd := exec.Command("go", "run", "./cmd/muster", "--config", configPath)
	cmd.Dir = framework.RepoRoot()
	out, err := cmd.CombinedOutput()
	g.Expect(err).To(HaveOccurred())
	g.Expect(string(out)).To(ContainSubstring("clientConnection.qps"))
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
