//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
	"github.com/musterhq/muster/test/framework"
)

// runDir is the local cluster's run directory.
func runDir() string {
	if d := os.Getenv("MUSTER_RUN_DIR"); d != "" {
		return d
	}
	return filepath.Join(framework.RepoRoot(), ".run", "cluster")
}

func freeLocalPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startFollower runs a second Muster on the cluster, as the chart's second
// replica: the local cluster's configuration on ports of its own. It
// returns its visibility port; the process is killed at cleanup.
func startFollower(t *testing.T) int {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(runDir(), "muster-config.yaml"))
	if err != nil {
		t.Fatalf("the local cluster's Muster configuration: %v", err)
	}
	probe, visibility := freeLocalPort(t), freeLocalPort(t)
	ports := map[string]string{
		`healthProbeBindAddress: 127\.0\.0\.1:\d+`:                        fmt.Sprintf("healthProbeBindAddress: 127.0.0.1:%d", probe),
		`(metrics:\s*\n(?:\s*#.*\n)*\s*bindAddress:) 127\.0\.0\.1:\d+`:    fmt.Sprintf("$1 127.0.0.1:%d", freeLocalPort(t)),
		`(visibility:\s*\n(?:\s*#.*\n)*\s*bindAddress:) 127\.0\.0\.1:\d+`: fmt.Sprintf("$1 127.0.0.1:%d", visibility),
		`port: \d+`: fmt.Sprintf("port: %d", freeLocalPort(t)),
	}
	for re, repl := range ports {
		cfg = regexp.MustCompile(re).ReplaceAll(cfg, []byte(repl))
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "muster.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(framework.RepoRoot(), "bin", "muster"),
		"--config", path, "--kubeconfig", filepath.Join(runDir(), "kubeconfig"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		_ = logf.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logf.Name())
			t.Logf("the follower's log:\n%s", tail(out, 4000))
		}
	})
	NewWithT(t).Eventually(func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", probe))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %d", resp.StatusCode)
		}
		return nil
	}, time.Minute, time.Second).Should(Succeed())
	return visibility
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// pointVisibilityAt sends the aggregated visibility API to a port,
// putting the APIService back at cleanup.
func pointVisibilityAt(t *testing.T, port int) {
	t.Helper()
	ctx := context.Background()
	svc := &unstructured.Unstructured{}
	svc.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"})
	if err := c.Get(ctx, client.ObjectKey{Name: "v1beta1.visibility.muster.dev"}, svc); err != nil {
		t.Fatal(err)
	}
	original, _, _ := unstructured.NestedInt64(svc.Object, "spec", "service", "port")
	patch := func(p int64) error {
		return c.Patch(ctx, svc, client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"service":{"port":%d}}}`, p)))
	}
	if err := patch(int64(port)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = patch(original) })
}

// TestAFollowerAnswersTheVisibilityAPI: the chart runs two replicas; a
// request the APIService sends to the one that does not lead gets the
// queue's positions and reasons, not a 503.
func TestAFollowerAnswersTheVisibilityAPI(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	queues(t, ns, "1", "0")
	// Created in name order: within one second of creation time the queue
	// orders by name, so the order is defined either way.
	for _, name := range []string{"running", "second", "third"} {
		createAll(t, gpuJob(ns, name, "main", 1, ""))
	}
	pointVisibilityAt(t, startFollower(t))
	cs, err := kubernetes.NewForConfig(restConfig)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		raw, err := cs.CoreV1().RESTClient().Get().
			AbsPath("/apis/visibility.muster.dev/v1beta1/namespaces/" + ns + "/localqueues/main/pendingworkloads").DoRaw(context.Background())
		g.Expect(err).NotTo(HaveOccurred(), "%s", raw)
		var got visibilityv1beta1.PendingWorkloadsSummary
		g.Expect(json.Unmarshal(raw, &got)).To(Succeed())
		g.Expect(got.Items).To(HaveLen(2))
		g.Expect(got.Items[0].PositionInLocalQueue).To(BeEquivalentTo(0))
		g.Expect(got.Items[0].Reason).To(ContainSubstring("nvidia.com/gpu"))
	}, timeout, time.Second).Should(Succeed())
	// kubectl muster, as a user runs it, through the follower.
	out, err := exec.Command(filepath.Join(framework.RepoRoot(), "bin", "kubectl-muster"), "list", "workloads", "-n", ns,
		"--kubeconfig", filepath.Join(runDir(), "kubeconfig")).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	g.Expect(string(out)).To(ContainSubstring("second"))
}
