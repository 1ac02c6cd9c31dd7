package dashboard

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// screenshot, when set, is where the test writes the page as it looked
// with one Job admitted and one waiting (docs/images/dashboard.png is made
// so: MUSTER_DASHBOARD_SCREENSHOT=$PWD/docs/images/dashboard.png).
var screenshot = os.Getenv("MUSTER_DASHBOARD_SCREENSHOT")

// browser starts headless Chromium with a fresh profile. Without Chromium
// the test is skipped, except under CI, where .ci/run installs it and its
// absence is a failure.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium not found: .ci/run installs Debian's chromium package")
		}
		t.Skip("chromium not found (apt-get install chromium); the dashboard's browser test needs it")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("ignore-certificate-errors", true), // the dashboard's self-signed certificate
		chromedp.WindowSize(1280, 1000), chromedp.UserDataDir(t.TempDir()),
		chromedp.WSURLReadTimeout(60*time.Second))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// viewerToken is a ServiceAccount token bound to config/rbac's
// dashboard-viewer ClusterRole, allowed to list the Workloads of the given
// namespaces.
func viewerToken(t *testing.T, namespaces ...string) string {
	t.Helper()
	ns := env.NewNamespace(t, "viewer", nil)
	token := env.ServiceAccountToken(t, ns, "admin")
	for _, wns := range namespaces {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "list-workloads", Namespace: wns},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"muster.dev"}, Resources: []string{"workloads"}, Verbs: []string{"list"}}}}
		env.CreateAll(t, role, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "list-workloads-" + ns, Namespace: wns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "admin", Namespace: ns}}})
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "dashboard-viewer-" + ns},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/dashboard", "/dashboard/*"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "admin", Namespace: ns}}}
	env.CreateAll(t, role, binding)
	return token
}

// text is the visible text of the first element matching sel ("" if none).
func text(ctx context.Context, sel string) (string, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q)||{}).innerText||""`, sel)))
}

// TestDashboardInABrowser: the dashboard needs an authorized token; with
// one, a person sees the ClusterQueue's GPU bar go from 0 / 4 to 4 / 4 when
// a Job is admitted, and a second Job listed as pending at position 0 with
// the reason it waits.
func TestDashboardInABrowser(t *testing.T) {
	g := NewWithT(t)
	addr := fmt.Sprintf("127.0.0.1:%d", framework.FreePort())
	env.StartManager(t, func(c *configv1beta1.Configuration) { c.Dashboard.BindAddress = addr })
	base := "https://" + addr + "/dashboard/"
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	g.Eventually(func() (int, error) {
		resp, err := insecure.Get(base)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}, framework.Timeout, framework.Interval).Should(Equal(http.StatusUnauthorized), "no token, no dashboard")

	q := env.NewGPUQueue(t, "dash", "a100", "4")
	token := viewerToken(t, q.Namespace)
	ctx := browser(t)
	// As a person does: post the token to the login form once; the cookie
	// does the rest.
	g.Expect(chromedp.Do(ctx, chromedp.Navigate(base+"login"))).To(Succeed())
	g.Expect(chromedp.Do(ctx, chromedp.SetValue("#token", token))).To(Succeed())
	g.Expect(chromedp.Do(ctx, chromedp.Click("#login"))).To(Succeed())
	bar := fmt.Sprintf(`#cq-%s .bar[data-resource="nvidia.com/gpu"] .usage`, q.ClusterQueue)
	g.Eventually(func() (string, error) { return text(ctx, bar) }, framework.Timeout, framework.Interval).Should(Equal("0 / 4"),
		func() string { body, _ := text(ctx, "body"); return "the page says: " + body })
	g.Eventually(func() (string, error) { return text(ctx, "#pending-table tbody") }).Should(ContainSubstring("nothing waits"))

	running := MakeJob("running", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "4").Obj()
	env.CreateAll(t, running)
	env.ExpectJobRunning(t, running, nil)
	g.Eventually(func() (string, error) { return text(ctx, bar) }, framework.Timeout, framework.Interval).Should(Equal("4 / 4"), "the bar follows the admission")
	g.Eventually(func() (string, error) { return text(ctx, "#admitted-table tbody") }, framework.Timeout, framework.Interval).
		Should(ContainSubstring(q.Namespace + "/job-running-"))
	g.Eventually(func() (string, error) { return text(ctx, "#recent") }, framework.Timeout, framework.Interval).Should(ContainSubstring("Admitted"))

	waiting := MakeJob("waiting", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "2").Obj()
	env.CreateAll(t, waiting)
	env.ExpectJobPending(t, waiting, "insufficient quota")
	g.Eventually(func(g Gomega) {
		row, err := text(ctx, "#pending-table tbody tr")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(row).To(ContainSubstring(q.Namespace + "/job-waiting-"))
		g.Expect(row).To(ContainSubstring("0 / 0"))
		g.Expect(row).To(ContainSubstring("insufficient quota for nvidia.com/gpu"))
	}, framework.Timeout, framework.Interval).Should(Succeed(), "the waiting Job, its position and why")

	if screenshot != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(os.MkdirAll(filepath.Dir(screenshot), 0o755)).To(Succeed())
		g.Expect(os.WriteFile(screenshot, png, 0o644)).To(Succeed())
	}
}

// TestDashboardRefusesAnUnauthorizedToken: a token the API server knows but
// that may not GET /dashboard/* gets 403, in the browser too.
func TestDashboardRefusesAnUnauthorizedToken(t *testing.T) {
	g := NewWithT(t)
	addr := fmt.Sprintf("127.0.0.1:%d", framework.FreePort())
	env.StartManager(t, func(c *configv1beta1.Configuration) { c.Dashboard.BindAddress = addr })
	token := env.ServiceAccountToken(t, env.NewNamespace(t, "nosy", nil), "nosy")
	ctx := browser(t)
	_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": "Bearer " + token}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		g.Expect(chromedp.Do(ctx, chromedp.Navigate("https://"+addr+"/dashboard/"))).To(Succeed())
		body, err := text(ctx, "body")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(strings.ToLower(body)).To(ContainSubstring("authorization denied"))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// TestDashboardListsOnlyTheViewersNamespaces: a viewer allowed to list the
// Workloads of one namespace sees that namespace's admitted and pending
// workloads and recent decisions, not another's; the queues and their bars
// are shown to all. A token in the login URL is refused.
func TestDashboardListsOnlyTheViewersNamespaces(t *testing.T) {
	g := NewWithT(t)
	addr := fmt.Sprintf("127.0.0.1:%d", framework.FreePort())
	env.StartManager(t, func(c *configv1beta1.Configuration) { c.Dashboard.BindAddress = addr })
	mine, theirs := env.NewGPUQueue(t, "mine", "a100", "4"), env.NewGPUQueue(t, "theirs", "a100", "4")
	for _, q := range []framework.GPUQueue{mine, theirs} {
		for _, j := range []*batchv1.Job{MakeJob("running", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "4").Obj(),
			MakeJob("waiting", q.Namespace).Queue(q.LocalQueue).Request(framework.GPU, "2").Obj()} {
			env.CreateAll(t, j)
		}
	}
	token := viewerToken(t, mine.Namespace)
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(path string) (int, string, error) {
		req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/dashboard/"+path, nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := insecure.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	g.Eventually(func(g Gomega) {
		code, body, err := get("api/state")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK), body)
		g.Expect(body).To(ContainSubstring(mine.Namespace+"/job-running-"), "its admitted workload")
		g.Expect(body).To(ContainSubstring(mine.Namespace+"/job-waiting-"), "its pending workload")
		g.Expect(body).To(ContainSubstring(`"name":"`+theirs.ClusterQueue+`"`), "every queue")
		g.Expect(body).NotTo(ContainSubstring(theirs.Namespace+"/"), "no workload of a namespace it may not list")
	}, framework.Timeout, framework.Interval).Should(Succeed())
	code, body, err := get("login?token=" + token)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusBadRequest), body)
}
