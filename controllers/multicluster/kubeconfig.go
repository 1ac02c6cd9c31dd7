package multicluster

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// requestTimeout bounds every request to a worker cluster: a worker that
// stops answering must not hold the manager's reconcilers.
const requestTimeout = 10 * time.Second

// errInsecure marks a kubeconfig refused for what it would make the
// manager do (run a program, read its own files, skip TLS verification).
var errInsecure = errors.New("insecure kubeconfig")

// restConfigFrom turns a Secret's kubeconfig into a client configuration.
// A kubeconfig is data an admin pasted, read by a process that holds the
// manager's credentials: it may not name files on the manager's disk, run
// an exec plugin or auth provider, or turn TLS verification off (Kueue
// refuses the same). Errors never quote the kubeconfig.
func restConfigFrom(data []byte) (*rest.Config, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("the Secret has no %q key", musterv1beta1.MultiClusterKubeConfigKey)
	}
	raw, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("the %q key is not a kubeconfig: %w", musterv1beta1.MultiClusterKubeConfigKey, err)
	}
	if err := validateKubeConfig(raw); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig is incomplete: %w", err)
	}
	cfg.Timeout = requestTimeout
	cfg.UserAgent = "muster-multicluster"
	return cfg, nil
}

// validateKubeConfig refuses what the manager must not do for a
// kubeconfig, in the context it would use.
func validateKubeConfig(raw *clientcmdapi.Config) error {
	ctx, ok := raw.Contexts[raw.CurrentContext]
	if !ok {
		return fmt.Errorf("the kubeconfig's current context %q does not exist", raw.CurrentContext)
	}
	cluster, ok := raw.Clusters[ctx.Cluster]
	if !ok {
		return fmt.Errorf("the kubeconfig's context names cluster %q, which it does not define", ctx.Cluster)
	}
	user, ok := raw.AuthInfos[ctx.AuthInfo]
	if !ok {
		return fmt.Errorf("the kubeconfig's context names user %q, which it does not define", ctx.AuthInfo)
	}
	switch {
	case cluster.Server == "":
		return fmt.Errorf("%w: cluster %q has no server", errInsecure, ctx.Cluster)
	case !strings.HasPrefix(cluster.Server, "https://"):
		return fmt.Errorf("%w: cluster %q is not served over https (its credentials would travel in clear)", errInsecure, ctx.Cluster)
	case cluster.InsecureSkipTLSVerify:
		return fmt.Errorf("%w: cluster %q skips TLS verification", errInsecure, ctx.Cluster)
	case cluster.CertificateAuthority != "":
		return fmt.Errorf("%w: cluster %q reads its CA from a file; embed certificate-authority-data", errInsecure, ctx.Cluster)
	case user.ClientCertificate != "" || user.ClientKey != "" || user.TokenFile != "":
		return fmt.Errorf("%w: user %q reads credentials from files; embed them", errInsecure, ctx.AuthInfo)
	case user.Exec != nil || user.AuthProvider != nil:
		return fmt.Errorf("%w: user %q runs an exec plugin or auth provider", errInsecure, ctx.AuthInfo)
	case user.Username != "" || user.Password != "":
		return fmt.Errorf("%w: user %q uses basic authentication", errInsecure, ctx.AuthInfo)
	}
	return nil
}
