//go:build e2e

// Package e2e drives the local cluster (hack/cluster.sh: real
// kube-apiserver, Job controller, kube-scheduler, kwok GPU nodes) with
// Muster running on it, through client-go. Run it with `make test-e2e`,
// which brings the cluster up with TOPOLOGY=2x2x4: the topology tests
// (topology_test.go) run on that tainted pool of 16 nodes, the others on the
// demo's 3 nodes as if the pool were not there.
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/test/framework"
)

var (
	c client.Client
	// restConfig is the cluster's, for clients other than c.
	restConfig *rest.Config
)

func TestMain(m *testing.M) {
	// The cluster of hack/cluster.sh: its run directory is MUSTER_RUN_DIR
	// (default .run/cluster), unless MUSTER_KUBECONFIG names a kubeconfig.
	path := os.Getenv("MUSTER_KUBECONFIG")
	if path == "" {
		run := os.Getenv("MUSTER_RUN_DIR")
		if run == "" {
			run = filepath.Join(framework.RepoRoot(), ".run", "cluster")
		}
		path = filepath.Join(run, "kubeconfig")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "no local cluster (%v): run `make cluster-up` or `make test-e2e`\n", err)
		os.Exit(1)
	}
	cfg.QPS, cfg.Burst = 100, 200
	restConfig = cfg
	c, err = client.New(cfg, client.Options{Scheme: framework.NewScheme()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
