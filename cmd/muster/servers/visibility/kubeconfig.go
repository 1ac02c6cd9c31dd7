package visibility

import (
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig file for cfg: k8s.io/apiserver's
// delegated authentication and authorization take a file path (or the
// in-cluster config), not a rest.Config, and the manager may run outside a
// pod (make demo, the tests) or with a --kubeconfig of its own.
func writeKubeconfig(path string, cfg *rest.Config) error {
	cluster := &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthority:     cfg.CAFile,
		CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify:    cfg.Insecure,
		TLSServerName:            cfg.ServerName,
	}
	user := &clientcmdapi.AuthInfo{
		ClientCertificate:     cfg.CertFile,
		ClientCertificateData: cfg.CertData,
		ClientKey:             cfg.KeyFile,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
		TokenFile:             cfg.BearerTokenFile,
		Username:              cfg.Username,
		Password:              cfg.Password,
	}
	if cfg.Impersonate.UserName != "" {
		user.Impersonate = cfg.Impersonate.UserName
		user.ImpersonateGroups = cfg.Impersonate.Groups
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["muster"] = cluster
	kc.AuthInfos["muster"] = user
	kc.Contexts["muster"] = &clientcmdapi.Context{Cluster: "muster", AuthInfo: "muster"}
	kc.CurrentContext = "muster"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
