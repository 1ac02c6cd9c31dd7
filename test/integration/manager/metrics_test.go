package manager

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// TestMetricsNeedAnAuthorizedToken runs the manager with the generated
// ClusterRole (so the TokenReview and SubjectAccessReview grants its metrics
// filter needs are checked too) and its default, secure metrics endpoint:
// no token gets 401, a ServiceAccount without metrics-reader 403, and one
// bound to metrics-reader Muster's metrics.
func TestMetricsNeedAnAuthorizedToken(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	addr := freeAddr(t)
	mgr, err := env.StartManagerAs(userWithRole(t, "role.yaml", "muster-metrics-test-manager"),
		func(c *configv1beta1.Configuration) { c.Metrics.BindAddress = addr })
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(mgr.StopE()).To(Succeed()) })
	g.Expect(*mgr.Config.Metrics.SecureServing).To(BeTrue(), "secure by default")

	ns := env.NewNamespace(t, "metrics", nil)
	reader := bindToRole(t, ns, "prometheus", "metrics_reader_role.yaml")
	other := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nosy", Namespace: ns}}
	env.CreateAll(t, other)
	cq := "cq-" + ns
	env.CreateAll(t, MakeClusterQueue(cq).Obj()) // so that Muster's gauges have a series

	url := "https://" + addr + "/metrics"
	g.Eventually(func() (int, error) { code, _, err := scrape(url, ""); return code, err },
		framework.Timeout, framework.Interval).Should(Equal(http.StatusUnauthorized), "no token")
	code, body, err := scrape(url, token(t, ctx, other))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusForbidden), body)
	readerToken := token(t, ctx, reader)
	g.Eventually(func(g Gomega) {
		code, body, err := scrape(url, readerToken)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK), body)
		g.Expect(series{"muster_pending_workloads", []string{"cluster_queue=" + cq, "status=active"}, "0"}.in(body)).To(BeTrue())
		g.Expect(series{"muster_reserving_active_workloads", []string{"cluster_queue=" + cq}, "0"}.in(body)).To(BeTrue())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// scrape GETs url over HTTPS with a bearer token (none if empty). The
// manager's certificate is self-signed, as Prometheus sees it with
// insecureSkipVerify.
func scrape(url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// token is a fresh token of a ServiceAccount, as the kubelet mounts one.
func token(t *testing.T, _ context.Context, sa *corev1.ServiceAccount) string {
	t.Helper()
	return env.ServiceAccountToken(t, sa.Namespace, sa.Name)
}

// userWithRole is a rest config for a user bound to exactly a ClusterRole
// from config/rbac, created under another name for the test.
func userWithRole(t *testing.T, file, name string) *rest.Config {
	t.Helper()
	role := clusterRole(t, file, name)
	env.CreateAll(t, role, binding(name, role.Name, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}))
	cfg, err := env.UserConfig(name)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// bindToRole creates a ServiceAccount bound to a ClusterRole from
// config/rbac.
func bindToRole(t *testing.T, ns, name, file string) *corev1.ServiceAccount {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	role := clusterRole(t, file, ns+"-"+name)
	env.CreateAll(t, sa, role, binding(role.Name, role.Name, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}))
	return sa
}

func clusterRole(t *testing.T, file, name string) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&role); err != nil {
		t.Fatal(err)
	}
	role.Name = name
	return &role
}

func binding(name, role string, subject rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{subject},
	}
}
