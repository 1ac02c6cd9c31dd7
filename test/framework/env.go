// Package framework runs Muster's integration tests against a real
// kube-apiserver and etcd (controller-runtime envtest, built by
// `make envtest-assets`). A test package starts one Env in TestMain and may
// start, stop and restart a manager against it as often as it likes.
package framework

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/musterhq/muster/cmd/muster/app"
)

// Options chooses what an Env installs.
type Options struct {
	// Webhooks installs Muster's webhook configurations, pointing at the
	// manager the test starts.
	Webhooks bool
	// JobCRDs names the job kinds whose CRDs to install, from bin/crds
	// (`make job-crds`): "pytorchjob", "raycluster"; or others the
	// Makefile puts there ("volcano", "coscheduling": `make gang-crds`).
	JobCRDs []string
	// APIServerArgs are extra kube-apiserver flags, e.g. feature gates.
	APIServerArgs map[string]string
	// Aggregation gives the API server a front proxy (CA and client
	// certificate), so it can proxy to aggregated APIs such as
	// visibility.muster.dev (RegisterVisibility).
	Aggregation bool
}

// WorkloadAPIArgs turn on Kubernetes' gang scheduling API
// (scheduling.k8s.io/v1beta1 Workload and PodGroup) in the API server.
var WorkloadAPIArgs = map[string]string{
	"feature-gates":  "GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
	"runtime-config": "scheduling.k8s.io/v1beta1=true",
}

// Env is a running API server with Muster's CRDs installed.
type Env struct {
	Config *rest.Config
	Client client.Client
	Scheme *k8sruntime.Scheme

	testEnv *envtest.Environment
	// webhooks is true when webhook configurations point at the managers.
	webhooks bool
}

// RepoRoot is the root of the repository, found from this file's path.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// NewScheme returns the manager's scheme plus the CRD types tests read.
func NewScheme() *k8sruntime.Scheme {
	s, err := app.Scheme()
	if err == nil {
		err = apiextensionsv1.AddToScheme(s)
	}
	if err != nil {
		panic(err)
	}
	return s
}

// Start starts etcd and kube-apiserver and installs the CRDs (and webhook
// configurations when asked). It fails fast with a hint when the control
// plane binaries have not been built.
func Start(opts Options) (*Env, error) {
	log.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel()),
		zap.RawZapOpts(uberzap.WrapCore(func(c zapcore.Core) zapcore.Core { return &errorRecorder{Core: c} }))))
	if err := setAssets(); err != nil {
		return nil, err
	}
	root := RepoRoot()
	crdDirs := []string{filepath.Join(root, "config", "crd", "bases")}
	for _, kind := range opts.JobCRDs {
		crdDirs = append(crdDirs, JobCRDDir(kind))
	}
	te := &envtest.Environment{CRDDirectoryPaths: crdDirs, ErrorIfCRDPathMissing: true}
	if opts.Webhooks {
		mutating, validating, err := KustomizeWebhooks(filepath.Join(root, "config", "webhook"))
		if err != nil {
			return nil, err
		}
		te.WebhookInstallOptions = envtest.WebhookInstallOptions{
			MutatingWebhooks:   mutating,
			ValidatingWebhooks: validating,
			LocalServingHost:   "127.0.0.1",
		}
	}
	apiServer := te.ControlPlane.GetAPIServer()
	apiServer.Configure().
		Set("max-requests-inflight", "1000").
		Set("max-mutating-requests-inflight", "500")
	for k, v := range opts.APIServerArgs {
		apiServer.Configure().Set(k, v)
	}
	if opts.Aggregation {
		dir, err := os.MkdirTemp("", "muster-front-proxy-")
		if err != nil {
			return nil, err
		}
		args, err := frontProxyArgs(dir)
		if err != nil {
			return nil, err
		}
		for k, v := range args {
			apiServer.Configure().Set(k, v)
		}
	}
	cfg, err := te.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	scheme := NewScheme()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = te.Stop()
		return nil, err
	}
	return &Env{Config: cfg, Client: c, Scheme: scheme, testEnv: te, webhooks: opts.Webhooks}, nil
}

// JobCRDDir is where `make job-crds` puts a job kind's CRD.
func JobCRDDir(kind string) string { return CRDDir(kind) }

// CRDDir is where the Makefile puts the CRDs of another project that tests
// install: bin/crds/NAME (`make job-crds`, `make cert-manager-crds`).
func CRDDir(name string) string { return filepath.Join(RepoRoot(), "bin", "crds", name) }

// InstallCRDs installs CRDs from a directory into the running API server.
func (e *Env) InstallCRDs(dir string) error {
	_, err := envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{Paths: []string{dir}, ErrorIfPathMissing: true})
	return err
}

// Stop stops the API server and etcd.
func (e *Env) Stop() error { return e.testEnv.Stop() }

// WebhookOptions is where envtest expects the webhook server: host, port and
// the directory with its serving certificate.
func (e *Env) WebhookOptions() envtest.WebhookInstallOptions { return e.testEnv.WebhookInstallOptions }

// KustomizeWebhooks builds config/webhook with kubectl's kustomize, so tests
// install exactly what users do, namespaceSelector patches included.
func KustomizeWebhooks(dir string) ([]*admissionregistrationv1.MutatingWebhookConfiguration, []*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	out, err := exec.Command(kubectl, "kustomize", dir).Output()
	if err != nil {
		return nil, nil, fmt.Errorf("kubectl kustomize %s: %w", dir, err)
	}
	var mutating []*admissionregistrationv1.MutatingWebhookConfiguration
	var validating []*admissionregistrationv1.ValidatingWebhookConfiguration
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return mutating, validating, nil
			}
			return nil, nil, err
		}
		data, _ := json.Marshal(doc)
		switch doc["kind"] {
		case "MutatingWebhookConfiguration":
			m := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := json.Unmarshal(data, m); err != nil {
				return nil, nil, err
			}
			mutating = append(mutating, m)
		case "ValidatingWebhookConfiguration":
			v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := json.Unmarshal(data, v); err != nil {
				return nil, nil, err
			}
			validating = append(validating, v)
		}
	}
}

// setAssets points envtest at bin/k8s unless KUBEBUILDER_ASSETS says
// otherwise, and says how to build the binaries when they are missing.
func setAssets() error {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "bin", "k8s")
		os.Setenv("KUBEBUILDER_ASSETS", dir)
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kubectl"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return fmt.Errorf("%s not found in %s: run `make envtest-assets` first (it builds the control plane from Go modules)", b, dir)
		}
	}
	return nil
}

func zapLevel() zapLevelT {
	if os.Getenv("MUSTER_TEST_VERBOSE") != "" {
		return -2
	}
	return 1 // warnings and errors only
}

// Eventually defaults for integration tests.
const (
	Timeout  = 20 * time.Second
	Interval = 50 * time.Millisecond
)

// Main is the TestMain of an integration test package: it starts an API
// server with opts, stores it in *env, runs the tests (with one manager for
// the whole package when withManager is set) and stops everything.
func Main(m *testing.M, opts Options, env **Env, withManager bool) {
	e, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*env = e
	var mgr *Manager
	if withManager {
		if mgr, err = e.StartManagerE(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			_ = e.Stop()
			os.Exit(1)
		}
	}
	code := m.Run()
	if mgr != nil {
		if err := mgr.StopE(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}
