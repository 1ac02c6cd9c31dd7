// Package cli runs kubectl-muster's commands against a real API server
// and the manager's visibility API, and compares what they print with
// golden files (go test ./test/integration/cli -update rewrites them).
package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var (
	env *framework.Env
	// kubeconfig is an admin kubeconfig file for env.
	kubeconfig string
)

func TestMain(m *testing.M) {
	e, err := framework.Start(framework.Options{Webhooks: true, Aggregation: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env = e
	code := run(m)
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}

func run(m *testing.M) int {
	if err := env.InstallCRDs(filepath.Join(framework.RepoRoot(), "bin", "bench", "kueue-crds")); err != nil {
		fmt.Fprintln(os.Stderr, "Kueue's CRDs (make bench-bins):", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "muster-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	data, err := env.KubeConfig()
	if err == nil {
		kubeconfig = filepath.Join(dir, "kubeconfig")
		err = os.WriteFile(kubeconfig, data, 0o600)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err := env.StartManagerWithVisibility(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = mgr.StopE() }()
	return m.Run()
}
