// Package dashboard serves Muster's read-only web dashboard: the cohort
// tree with each ClusterQueue's quota bars per flavor and resource, the
// pending workloads with their positions and reasons, the admitted ones,
// and the scheduler's recent admissions, evictions and preemptions, kept
// live by server-sent events. It is served by the manager (every replica:
// each keeps the queues; only the leader has recent decisions) because what it shows is in the
// scheduler's memory: a separate binary would have to ask the API server,
// or the visibility API, for all of it, every second, per viewer.
package dashboard

import (
	"context"
	"crypto/tls"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

//go:embed static
var static embed.FS

// Prefix is where the dashboard lives; RBAC grants GET on it
// (nonResourceURLs /dashboard and /dashboard/*).
const Prefix = "/dashboard/"

// tokenCookie keeps a browser's bearer token after /dashboard/login.
const tokenCookie = "muster-dashboard-token"

// refresh is how often the stream sends the state.
const refresh = time.Second

// Server is the dashboard, a manager Runnable on every replica.
type Server struct {
	BindAddress string
	// Secure serves HTTPS and checks bearer tokens as /metrics does, and
	// lists only the workloads of the namespaces the token may list
	// Workloads in (auth.go).
	Secure bool
	// CertDir, when it holds tls.crt and tls.key (a mounted Secret), is
	// the HTTPS certificate, reloaded when it changes; else a self-signed
	// one is made at start.
	CertDir    string
	RestConfig *rest.Config
	Source     Source
	Clock      clock.PassiveClock
}

// NeedLeaderElection is false: every replica keeps the queues, so every
// replica shows them.
func (s *Server) NeedLeaderElection() bool { return false }

// Handler is the dashboard's routes, without authentication.
func (s *Server) Handler() http.Handler {
	files, _ := fs.Sub(static, "static")
	mux := http.NewServeMux()
	mux.Handle("GET "+Prefix, http.StripPrefix(Prefix, http.FileServerFS(files)))
	mux.HandleFunc("GET "+Prefix+"api/state", s.serveState)
	mux.HandleFunc("GET "+Prefix+"api/stream", s.serveStream)
	mux.Handle("GET /dashboard", http.RedirectHandler(Prefix, http.StatusFound))
	return mux
}

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	handler := s.Handler()
	ln, err := net.Listen("tcp", s.BindAddress)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	if s.Secure {
		if handler, err = authenticating(s.RestConfig, mustHTTPClient(s.RestConfig), ctrl.Log.WithName("dashboard"), handler); err != nil {
			return err
		}
		tlsConfig, err := s.tlsConfig(ctx)
		if err != nil {
			return err
		}
		ln = tls.NewListener(ln, tlsConfig)
	}
	srv := &http.Server{Handler: withLogin(withCookieToken(handler)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	ctrl.Log.WithName("dashboard").Info("Serving the dashboard", "address", ln.Addr().String(), "secure", s.Secure)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func mustHTTPClient(cfg *rest.Config) *http.Client {
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return http.DefaultClient
	}
	return c
}

// tlsConfig serves the certificate of CertDir when it has one (watched, so
// a renewed Secret is served without a restart), else a self-signed one.
func (s *Server) tlsConfig(ctx context.Context) (*tls.Config, error) {
	cfg := &tls.Config{NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}
	crt, key := filepath.Join(s.CertDir, "tls.crt"), filepath.Join(s.CertDir, "tls.key")
	if _, err := os.Stat(crt); s.CertDir != "" && err == nil {
		w, err := certwatcher.New(crt, key)
		if err != nil {
			return nil, fmt.Errorf("dashboard certificate: %w", err)
		}
		go func() { _ = w.Start(ctx) }()
		cfg.GetCertificate = w.GetCertificate
		return cfg, nil
	}
	cert, err := selfSigned()
	if err != nil {
		return nil, err
	}
	cfg.Certificates = []tls.Certificate{cert}
	return cfg, nil
}

func selfSigned() (tls.Certificate, error) {
	crt, key, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(crt, key)
}

// withCookieToken turns the login cookie into the Authorization header the
// authentication filter reads, unless the request has one.
func withCookieToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			if c, err := r.Cookie(tokenCookie); err == nil && c.Value != "" {
				r = r.Clone(r.Context())
				r.Header.Set("Authorization", "Bearer "+c.Value)
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

func (s *Server) serveState(w http.ResponseWriter, r *http.Request) {
	st, err := s.Source.build(r.Context(), s.now(), mayListFrom(r.Context()))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(st)
}

// serveStream sends the state as server-sent events every refresh while
// it changes (and a comment to keep the connection alive otherwise).
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var last []byte
	tick := time.NewTicker(refresh)
	defer tick.Stop()
	may := mayListFrom(r.Context())
	for {
		st, err := s.Source.build(r.Context(), s.now(), may)
		if err == nil {
			st.Time = time.Time{} // unchanged state, unchanged bytes
			data, _ := json.Marshal(st)
			if string(data) != string(last) {
				fmt.Fprintf(w, "data: %s\n\n", data)
				last = data
			} else {
				fmt.Fprint(w, ": unchanged\n\n")
			}
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
