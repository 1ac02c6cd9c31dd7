package multicluster

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func kubeconfig(mutate func(*clientcmdapi.Cluster, *clientcmdapi.AuthInfo)) []byte {
	cluster := &clientcmdapi.Cluster{Server: "https://10.0.0.1:6443", CertificateAuthorityData: []byte("ca")}
	user := &clientcmdapi.AuthInfo{Token: "secret-token"}
	if mutate != nil {
		mutate(cluster, user)
	}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"w": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": user},
		Contexts:       map[string]*clientcmdapi.Context{"c": {Cluster: "w", AuthInfo: "u"}},
		CurrentContext: "c",
	}
	out, err := clientcmd.Write(cfg)
	if err != nil {
		panic(err)
	}
	return out
}

func TestRestConfigFrom(t *testing.T) {
	cases := []struct {
		name     string
		data     []byte
		insecure bool
		wantErr  string
	}{
		{name: "embedded credentials", data: kubeconfig(nil)},
		{name: "empty", data: nil, wantErr: `no "kubeconfig" key`},
		{name: "not a kubeconfig", data: []byte("{{"), wantErr: "not a kubeconfig"},
		{name: "no server", data: kubeconfig(func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo) { c.Server = "" }), insecure: true, wantErr: "has no server"},
		{name: "plain http", data: kubeconfig(func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo) { c.Server = "http://10.0.0.1:8080" }), insecure: true, wantErr: "not served over https"},
		{name: "TLS off", data: kubeconfig(func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo) {
			c.InsecureSkipTLSVerify, c.CertificateAuthorityData = true, nil
		}), insecure: true, wantErr: "skips TLS verification"},
		{name: "CA file", data: kubeconfig(func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo) { c.CertificateAuthority = "/etc/ca.crt" }), insecure: true, wantErr: "reads its CA from a file"},
		{name: "token file", data: kubeconfig(func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) { u.TokenFile = "/var/run/token" }), insecure: true, wantErr: "reads credentials from files"},
		{name: "client key file", data: kubeconfig(func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) { u.ClientKey = "/k.pem" }), insecure: true, wantErr: "reads credentials from files"},
		{name: "exec plugin", data: kubeconfig(func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
			u.Exec = &clientcmdapi.ExecConfig{Command: "/bin/sh", APIVersion: "client.authentication.k8s.io/v1"}
		}), insecure: true, wantErr: "exec plugin"},
		{name: "basic auth", data: kubeconfig(func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) { u.Username, u.Password = "a", "b" }), insecure: true, wantErr: "basic authentication"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := restConfigFrom(tc.data)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if cfg.Timeout != requestTimeout || cfg.Host != "https://10.0.0.1:6443" {
					t.Errorf("config = host %q timeout %s", cfg.Host, cfg.Timeout)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
			if errors.Is(err, errInsecure) != tc.insecure {
				t.Errorf("insecure = %v, want %v", errors.Is(err, errInsecure), tc.insecure)
			}
			if strings.Contains(err.Error(), "secret-token") {
				t.Errorf("the error quotes the credential: %v", err)
			}
		})
	}
}
