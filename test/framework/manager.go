package framework

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	"github.com/musterhq/muster/cmd/muster/app"
	"github.com/musterhq/muster/controllers/jobs"
)

// Manager is a Muster manager running in the test process.
type Manager struct {
	manager.Manager
	Config *configv1beta1.Configuration

	cancel context.CancelFunc
	done   chan error
}

// TestConfig is the configuration tests run the manager with: defaults but
// every registered job kind enabled, no leader election, no metrics, probe
// or visibility listeners, and the webhook server where envtest's webhook configurations
// point.
func (e *Env) TestConfig() *configv1beta1.Configuration {
	wh := e.testEnv.WebhookInstallOptions
	cfg := &configv1beta1.Configuration{
		Health:                 configv1beta1.HealthConfig{HealthProbeBindAddress: "0"},
		Metrics:                configv1beta1.MetricsConfig{BindAddress: "0"},
		Visibility:             configv1beta1.VisibilityConfig{BindAddress: "0"},
		LeaderElection:         &configv1beta1.LeaderElectionConfig{LeaderElect: ptr.To(false)},
		InternalCertManagement: &configv1beta1.InternalCertManagement{Enable: ptr.To(false)},
	}
	if e.webhooks {
		cfg.Webhook = configv1beta1.WebhookConfig{Host: wh.LocalServingHost, Port: ptr.To(wh.LocalServingPort), CertDir: wh.LocalServingCertDir}
	} else {
		// No webhooks installed: keep the unused server off shared ports,
		// serving envtest's certificate (there is none at the default
		// path on a fresh machine).
		cfg.Webhook = configv1beta1.WebhookConfig{Host: "127.0.0.1", Port: ptr.To(freePort()), CertDir: wh.LocalServingCertDir}
	}
	configv1beta1.SetDefaults(cfg)
	// Every registered kind, opt-in or not: a kind's tests need no
	// configuration of their own.
	cfg.Integrations.Frameworks = jobs.Registry().Names()
	return cfg
}

// StartManager starts a manager with TestConfig, changed by the given
// functions, and waits until its webhook server answers. It is stopped when
// the test ends unless stopped earlier.
func (e *Env) StartManager(t testing.TB, mutate ...func(*configv1beta1.Configuration)) *Manager {
	t.Helper()
	m, err := e.StartManagerE(mutate...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.StopE(); err != nil {
			t.Error(err)
		}
	})
	return m
}

// StartManagerE is StartManager for callers without a testing.TB, such as
// TestMain; the caller stops the manager.
func (e *Env) StartManagerE(mutate ...func(*configv1beta1.Configuration)) (*Manager, error) {
	return e.StartManagerAs(e.Config, mutate...)
}

// StartManagerAs starts a manager that talks to the API server with the
// given identity (tests of the generated RBAC); the caller stops it.
func (e *Env) StartManagerAs(restConfig *rest.Config, mutate ...func(*configv1beta1.Configuration)) (*Manager, error) {
	cfg := e.TestConfig()
	for _, m := range mutate {
		m(cfg)
	}
	mgr, err := app.NewManager(restConfig, cfg, app.WithManagerOptions(func(o *ctrl.Options) {
		// Several managers run in one test process, one after another or
		// side by side; their controllers share names.
		o.Controller.SkipNameValidation = ptr.To(true)
	}))
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{Manager: mgr, Config: cfg, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	if !e.webhooks {
		return m, nil
	}
	started := func(context.Context) (bool, error) {
		return mgr.GetWebhookServer().StartedChecker()(&http.Request{}) == nil, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, Interval, Timeout, true, started); err != nil {
		_ = m.StopE()
		return nil, fmt.Errorf("webhook server did not start within %s: %w", Timeout, err)
	}
	return m, nil
}

// Elected is closed once the manager leads (at once without leader election).
func (m *Manager) Elected() <-chan struct{} { return m.Manager.Elected() }

// Stop stops the manager and waits for it to return. Stopping twice is fine.
func (m *Manager) Stop(t testing.TB) {
	t.Helper()
	if err := m.StopE(); err != nil {
		t.Error(err)
	}
}

// StopE stops the manager and returns what it returned.
func (m *Manager) StopE() error {
	if m.cancel == nil {
		return nil
	}
	m.cancel()
	m.cancel = nil
	select {
	case err := <-m.done:
		if err != nil {
			return fmt.Errorf("manager stopped with error: %w", err)
		}
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("manager did not stop within 30s")
	}
}

// Restart stops the manager and starts a new one with the same
// configuration, as a pod restart would.
func (e *Env) Restart(t testing.TB, m *Manager) *Manager {
	t.Helper()
	m.Stop(t)
	cfg := m.Config.DeepCopy()
	return e.StartManager(t, func(c *configv1beta1.Configuration) { *c = *cfg })
}

// UserConfig returns a rest config for a user of the given name and groups,
// with no permissions but those the test grants.
func (e *Env) UserConfig(name string, groups ...string) (*rest.Config, error) {
	user, err := e.testEnv.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, err
	}
	return user.Config(), nil
}

// KubeConfig returns an admin kubeconfig for the API server.
func (e *Env) KubeConfig() ([]byte, error) {
	user, err := e.testEnv.AddUser(envtest.User{Name: "muster-test-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding user: %w", err)
	}
	return user.KubeConfig()
}

// KubeConfigAs returns a kubeconfig (credentials embedded) for a user of
// the given name and groups, with no permissions but those the test
// grants, whose server is the API server's address or, if set, server
// (a Proxy's address in front of it).
func (e *Env) KubeConfigAs(name, server string, groups ...string) ([]byte, error) {
	user, err := e.testEnv.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding user: %w", err)
	}
	raw, err := user.KubeConfig()
	if err != nil || server == "" {
		return raw, err
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return nil, err
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + server
	}
	return clientcmd.Write(*cfg)
}

// APIServerAddr is the API server's host:port.
func (e *Env) APIServerAddr() string {
	u, err := url.Parse(e.Config.Host)
	if err != nil {
		return e.Config.Host
	}
	return u.Host
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreePort is a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() int { return freePort() }
