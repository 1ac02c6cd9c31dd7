//go:build e2e

// Package multicluster drives three local clusters (hack/cluster.sh, the
// manager, and the two workers of hack/multicluster.sh: each a real
// kube-apiserver, Job controller, kube-scheduler, kwok GPU nodes and its
// own Muster) through the manager's Muster dispatching whole Jobs to the
// workers. Run it with `make test-e2e`, which starts them all.
package multicluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const (
	managerNS = "muster-system"
	check     = "e2e-dispatch"
)

var (
	// base is the manager's run directory; worker N's is base-workerN.
	base                      string
	manager, worker1, worker2 client.Client
)

func TestMain(m *testing.M) {
	base = os.Getenv("MUSTER_RUN_DIR")
	if base == "" {
		base = filepath.Join(framework.RepoRoot(), ".run", "cluster")
	}
	var err error
	for _, c := range []struct {
		dst *client.Client
		dir string
	}{{&manager, base}, {&worker1, base + "-worker1"}, {&worker2, base + "-worker2"}} {
		if *c.dst, err = clientFor(filepath.Join(c.dir, "kubeconfig")); err != nil {
			fmt.Fprintf(os.Stderr, "no cluster in %s (%v): run `make test-e2e`, or hack/cluster.sh up and hack/multicluster.sh up\n", c.dir, err)
			os.Exit(1)
		}
	}
	if err := connectWorkers(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func clientFor(path string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	return client.New(cfg, client.Options{Scheme: framework.NewScheme()})
}

// connectWorkers gives the manager a MultiCluster per worker, whose Secret
// is the kubeconfig hack/multicluster.sh wrote for the worker ClusterRole's
// ServiceAccount there, and the check dispatching to both (replaced if a
// run before left them).
func connectWorkers(ctx context.Context) error {
	for _, name := range []string{"worker1", "worker2"} {
		kubeconfig, err := os.ReadFile(filepath.Join(base+"-"+name, "manager.kubeconfig"))
		if err != nil {
			return err
		}
		if err := replace(ctx, MakeKubeConfigSecret(name, managerNS, kubeconfig), MakeMultiCluster(name, name)); err != nil {
			return err
		}
	}
	ac, cfg := MakeMultiClusterCheck(check, "worker1", "worker2")
	return replace(ctx, cfg, ac)
}

func replace(ctx context.Context, objs ...client.Object) error {
	for _, o := range objs {
		if err := client.IgnoreNotFound(manager.Delete(ctx, o)); err != nil {
			return err
		}
		if err := waitGone(ctx, o); err != nil {
			return err
		}
		if err := manager.Create(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

func waitGone(ctx context.Context, o client.Object) error {
	for range 100 {
		err := manager.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		if err != nil {
			o.SetResourceVersion("")
			return nil
		}
		<-timeAfter()
	}
	return fmt.Errorf("%s %s was not deleted", o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
}

// namespace creates a namespace of the same name in every cluster,
// deleted when the test ends.
func namespace(t *testing.T, prefix string) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := manager.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for _, w := range []client.Client{worker1, worker2} {
		if err := w.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, c := range []client.Client{manager, worker1, worker2} {
			_ = c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}})
		}
	})
	return ns.Name
}
