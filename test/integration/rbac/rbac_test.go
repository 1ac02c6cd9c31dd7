// Package rbac runs the manager with exactly the ClusterRole generated from
// the controllers' RBAC markers (config/rbac/role.yaml): if a controller
// needs a verb its markers do not grant, this test fails.
package rbac

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{Webhooks: true}, &env, false) }

func TestManagerWorksWithTheGeneratedRole(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "rbac", "role.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var role rbacv1.ClusterRole
	g.Expect(utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&role)).To(Succeed())
	role.Name = "muster-test-manager-role"
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "muster-test-manager"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "muster-manager"}},
	}
	env.CreateAll(t, &role, binding)
	cfg, err := env.UserConfig("muster-manager")
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := env.StartManagerAs(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(mgr.StopE()).To(Succeed()) })

	ns := env.NewNamespace(t, "rbac", nil)
	gpu := corev1.ResourceName("nvidia.com/gpu")
	env.CreateAll(t,
		MakeResourceFlavor("f-"+ns).NodeLabel("pool", ns).QuotaOnly().Obj(),
		MakeClusterQueue("cq-"+ns).ResourceGroup(MakeFlavorQuotas("f-"+ns).Resource(gpu, "4").Obj()).Obj(),
		MakeLocalQueue("main", ns).ClusterQueue("cq-"+ns).Obj())
	first, second := MakeJob("first", ns).Queue("main").Request(gpu, "4").Obj(), MakeJob("second", ns).Queue("main").Request(gpu, "4").Obj()
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	env.ExpectJobRunning(t, first, map[string]string{"pool": ns})
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	env.ExpectJobPending(t, second, "insufficient quota")
	env.CompleteJob(t, first)
	env.ExpectJobRunning(t, second, map[string]string{"pool": ns})
}
