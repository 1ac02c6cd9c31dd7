// Package multicluster tests the dispatch of whole jobs from a manager
// cluster to worker clusters against three real API servers, each with its
// own Muster: the manager's reaches the workers only with the worker
// ClusterRole of config/multicluster, and worker2 through a proxy the
// tests cut to lose it.
package multicluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const (
	managerNS = "muster-system"
	check     = "dispatch"
	// workerLostTimeout is short so that a lost worker's jobs move within
	// a test's patience.
	workerLostTimeout = 3 * time.Second
)

var (
	manager, worker1, worker2 *framework.Env
	managerMuster             *framework.Manager
	// proxy2 stands between the manager's Muster and worker2.
	proxy2 *framework.Proxy
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	var stops []func() error
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			if err := stops[i](); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	}()
	for _, e := range []**framework.Env{&manager, &worker1, &worker2} {
		env, err := framework.Start(framework.Options{Webhooks: true, JobCRDs: []string{"jobset", "pytorchjob", "raycluster"}})
		if err != nil {
			return 1, err
		}
		*e = env
		stops = append(stops, env.Stop)
	}
	p, err := framework.NewProxy(worker2.APIServerAddr())
	if err != nil {
		return 1, err
	}
	proxy2 = p
	stops = append(stops, func() error { p.Close(); return nil })
	if err := connectWorkers(); err != nil {
		return 1, err
	}
	for _, w := range []*framework.Env{worker1, worker2} {
		mgr, err := w.StartManagerE()
		if err != nil {
			return 1, err
		}
		stops = append(stops, mgr.StopE)
	}
	if managerMuster, err = manager.StartManagerE(managerConfig); err != nil {
		return 1, err
	}
	stops = append(stops, func() error { return managerMuster.StopE() })
	return m.Run(), nil
}

func managerConfig(c *configv1beta1.Configuration) {
	c.MultiCluster.WorkerLostTimeout = &metav1.Duration{Duration: workerLostTimeout}
	c.MultiCluster.GCInterval = &metav1.Duration{Duration: 2 * time.Second}
}

// connectWorkers gives each worker the worker ClusterRole, bound to a user
// of its own, and the manager a MultiCluster per worker whose Secret holds
// that user's kubeconfig, and the check that dispatches to both.
func connectWorkers() error {
	ctx := context.Background()
	if err := manager.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNS}}); err != nil {
		return err
	}
	for _, w := range []struct {
		name, server string
		env          *framework.Env
	}{{"worker1", "", worker1}, {"worker2", proxy2.Addr, worker2}} {
		if err := applyWorkerRole(ctx, w.env); err != nil {
			return err
		}
		kubeconfig, err := w.env.KubeConfigAs("muster-manager", w.server)
		if err != nil {
			return err
		}
		for _, o := range []client.Object{
			MakeKubeConfigSecret(w.name, managerNS, kubeconfig),
			MakeMultiCluster(w.name, w.name),
		} {
			if err := manager.Client.Create(ctx, o); err != nil {
				return err
			}
		}
	}
	ac, cfg := MakeMultiClusterCheck(check, "worker1", "worker2")
	for _, o := range []client.Object{cfg, ac} {
		if err := manager.Client.Create(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// applyWorkerRole creates config/multicluster/worker_role.yaml's
// ClusterRole in a worker, bound to the user muster-manager.
func applyWorkerRole(ctx context.Context, env *framework.Env) error {
	f, err := os.Open(filepath.Join(framework.RepoRoot(), "config", "multicluster", "worker_role.yaml"))
	if err != nil {
		return err
	}
	defer f.Close()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err != nil {
			break
		}
		if obj.GetKind() != "ClusterRole" {
			continue
		}
		if err := env.Client.Create(ctx, &obj); err != nil {
			return err
		}
		return env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: obj.GetName()},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: obj.GetName()},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "muster-manager"}},
		})
	}
	return fmt.Errorf("no ClusterRole in worker_role.yaml")
}
