package harness

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TargetUser is the identity the system under test runs as; the audit
// policy records only its requests, so the harness's own traffic (creating
// workloads, finishing them) is not counted against it.
const TargetUser = "bench-target"

// auditPolicy logs the target's requests once each, when they complete.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  users: ["` + TargetUser + `"]
- level: None
`

// APIServer is one envtest control plane for one run.
type APIServer struct {
	env *envtest.Environment
	// Config is the harness's own admin client configuration, unthrottled.
	Config *rest.Config
	// Dynamic is a client on Config.
	Dynamic dynamic.Interface
	// TargetKubeconfig is the kubeconfig file of TargetUser.
	TargetKubeconfig string
	// AuditLog is the file the target's requests are logged to.
	AuditLog string
	pid      int
	log      *os.File
	// Nice is the CPU priority the API server and etcd ran at:
	// ControlPlaneNice, or 0 where the harness may not raise it.
	Nice     int
	priority *priorityKeeper
}

// StartAPIServer starts etcd and kube-apiserver (from KUBEBUILDER_ASSETS)
// with the CRDs in crdDir. As in Kueue's performance test the in-flight
// limits are raised, so the API server's CPU, not its admission queue, is
// what a fast controller runs into.
func StartAPIServer(dir, crdDir string) (*APIServer, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	a := &APIServer{AuditLog: filepath.Join(dir, "audit.log")}
	a.env = &envtest.Environment{
		CRDDirectoryPaths:     []string{crdDir},
		ErrorIfCRDPathMissing: true,
	}
	// Its log says which watchers it closed for falling behind
	// (APIServerLoad.TerminatedWatchers).
	logFile, err := os.Create(filepath.Join(dir, "apiserver.log"))
	if err != nil {
		return nil, err
	}
	a.log = logFile
	a.env.ControlPlane.GetAPIServer().StopTimeout = time.Minute
	a.env.ControlPlane.GetAPIServer().Out = logFile
	a.env.ControlPlane.GetAPIServer().Err = logFile
	args := a.env.ControlPlane.GetAPIServer().Configure()
	args.Set("max-requests-inflight", "2000")
	args.Set("max-mutating-requests-inflight", "1000")
	args.Set("v", "1")
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", a.AuditLog)
	args.Set("audit-log-mode", "batch")
	args.Set("audit-log-format", "json")
	// Never rotate: the write counts read this one file, and the API
	// server's default rotates it at 100 MB, which a 100k-workload sweep
	// or the steady mix exceed (their writes were undercounted before).
	args.Set("audit-log-maxsize", "1000000")
	cfg, err := a.env.Start()
	if err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting the API server: %w", err)
	}
	a.prioritise()
	a.Config = rest.CopyConfig(cfg)
	a.Config.QPS, a.Config.Burst = -1, 0 // the load generator is never the bottleneck
	if a.Dynamic, err = dynamic.NewForConfig(a.Config); err != nil {
		a.Stop()
		return nil, err
	}
	if a.TargetKubeconfig, err = a.writeTargetKubeconfig(dir); err != nil {
		a.Stop()
		return nil, err
	}
	return a, nil
}

func (a *APIServer) writeTargetKubeconfig(dir string) (string, error) {
	user, err := a.env.AddUser(envtest.User{Name: TargetUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "target.kubeconfig")
	return path, os.WriteFile(path, kc, 0o600)
}

// CPUSeconds is the API server's CPU time so far.
func (a *APIServer) CPUSeconds() (float64, error) {
	if a.pid == 0 {
		pid, err := findProcess(a.AuditLog) // the flag names this run's file
		if err != nil {
			return 0, err
		}
		a.pid = pid
	}
	return cpuSeconds(a.pid)
}

// prioritise runs the API server and etcd at ControlPlaneNice, or warns
// that they run at the machine's default where it may not.
func (a *APIServer) prioritise() {
	apiserver, err := findProcess(a.AuditLog) // the flag names this run's file
	if err == nil {
		a.pid = apiserver
		var etcd int
		if etcd, err = findProcess(a.env.ControlPlane.Etcd.DataDir); err == nil {
			a.priority, err = keepPriority([]int{apiserver, etcd}, ControlPlaneNice, time.Second)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "warning: the control plane runs at nice 0 (raising it needs CAP_SYS_NICE; or its process was not found): %v\n", err)
		return
	}
	a.Nice = ControlPlaneNice
}

// Stop stops the control plane.
func (a *APIServer) Stop() {
	if err := a.priority.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "warning: keeping the control plane's priority: %v\n", err)
	}
	a.priority = nil
	if err := a.env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the API server: %v\n", err)
	}
	_ = a.log.Close()
}

// waitEstablished waits until the API server serves the target's Workloads.
func (a *APIServer) waitEstablished(ctx context.Context, t Target) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		if _, err := a.Dynamic.Resource(t.Resource("Workload")).List(ctx, listOne); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the %s Workload API never became available", t.Name)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func writeSelfSignedCert(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
