// Package visibility serves visibility.muster.dev/v1beta1, the aggregated
// API of pending workloads with their positions and reasons, from the
// scheduler's in-memory queues. It is an extension API server built on
// k8s.io/apiserver (as Kueue's visibility server is): the kube-apiserver
// proxies to it through an APIService, authenticates the user, and this
// server asks it (SubjectAccessReview) whether that user may get the
// subresource, so the API server's RBAC governs it like any resource.
package visibility

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/compatibility"
	"k8s.io/component-base/version"

	"github.com/musterhq/muster/apis/visibility/openapi"
	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	utilruntime.Must(visibilityv1beta1.AddToScheme(scheme))
	// The unversioned meta types (Status, WatchEvent, options) every API
	// server serves.
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
}

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Server is the visibility API server, a manager Runnable on every replica
// (every replica, leader or not, once it has rebuilt its queues at start).
type Server struct {
	// BindAddress is host:port.
	BindAddress string
	// CertDir holds tls.crt and tls.key to serve with (the webhook
	// server's, whose Service the APIService names); without them a
	// self-signed certificate is generated in memory.
	CertDir string
	// RestConfig reaches the API server that delegates authentication and
	// authorization to.
	RestConfig *rest.Config
	Source     Source
}

// NeedLeaderElection is false: every replica answers, so the APIService
// never reports the API unavailable because a follower was picked.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "muster-visibility-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	server, err := s.build(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return fmt.Errorf("building the visibility API server: %w", err)
	}
	return server.PrepareRun().RunWithContext(ctx)
}

// build assembles the generic API server: serving, delegated authn/authz,
// OpenAPI, and the one API group. No etcd, no admission, no priority and
// fairness (the kube-apiserver in front already applies it).
func (s *Server) build(kubeconfig string) (*genericapiserver.GenericAPIServer, error) {
	if err := writeKubeconfig(kubeconfig, s.RestConfig); err != nil {
		return nil, err
	}
	cfg := genericapiserver.NewRecommendedConfig(codecs)
	cfg.EffectiveVersion = compatibility.NewEffectiveVersionFromString(version.DefaultKubeBinaryVersion, "", "")
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openapi.GetOpenAPIDefinitions, openapinamer.NewDefinitionNamer(scheme))
	cfg.OpenAPIConfig.Info.Title = "Muster visibility"
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, openapinamer.NewDefinitionNamer(scheme))
	cfg.OpenAPIV3Config.Info.Title = "Muster visibility"
	cfg.EnableMetrics = false
	cfg.EnableProfiling = false
	cfg.ClientConfig = rest.CopyConfig(s.RestConfig)

	serving, err := s.serving()
	if err != nil {
		return nil, err
	}
	if err := serving.ApplyTo(&cfg.SecureServing, &cfg.LoopbackClientConfig); err != nil {
		return nil, err
	}
	authn := genericoptions.NewDelegatingAuthenticationOptions()
	authn.RemoteKubeConfigFile = kubeconfig
	if err := authn.ApplyTo(&cfg.Authentication, cfg.SecureServing, cfg.OpenAPIConfig); err != nil {
		return nil, err
	}
	authz := genericoptions.NewDelegatingAuthorizationOptions().WithAlwaysAllowPaths("/healthz", "/readyz", "/livez")
	authz.RemoteKubeConfigFile = kubeconfig
	if err := authz.ApplyTo(&cfg.Authorization); err != nil {
		return nil, err
	}
	server, err := cfg.Complete().New("muster-visibility", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(visibilityv1beta1.GroupVersion.Group, scheme, runtime.NewParameterCodec(scheme), codecs)
	group.VersionedResourcesStorageMap[visibilityv1beta1.GroupVersion.Version] = storages(s.Source)
	if err := server.InstallAPIGroup(&group); err != nil {
		return nil, err
	}
	return server, nil
}

// serving is the listener and certificate: the given files if present
// (reloaded when they change), else a self-signed pair in memory.
func (s *Server) serving() (*genericoptions.SecureServingOptionsWithLoopback, error) {
	o := genericoptions.NewSecureServingOptions()
	host, port, err := net.SplitHostPort(s.BindAddress)
	if err != nil {
		return nil, fmt.Errorf("visibility.bindAddress %q: %w", s.BindAddress, err)
	}
	if o.BindPort, err = strconv.Atoi(port); err != nil {
		return nil, fmt.Errorf("visibility.bindAddress %q: port: %w", s.BindAddress, err)
	}
	if host != "" {
		if o.BindAddress = net.ParseIP(host); o.BindAddress == nil {
			return nil, fmt.Errorf("visibility.bindAddress %q: host must be an IP address", s.BindAddress)
		}
	}
	o.ServerCert.CertDirectory = ""
	crt, key := filepath.Join(s.CertDir, "tls.crt"), filepath.Join(s.CertDir, "tls.key")
	if s.CertDir != "" && readable(crt) && readable(key) {
		o.ServerCert.CertKey = genericoptions.CertKey{CertFile: crt, KeyFile: key}
	}
	if err := o.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return nil, err
	}
	return o.WithLoopback(), nil
}

func readable(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
