package v1beta1

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadDefaults(t *testing.T) {
	cfg, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]bool{
		"namespace":                       *cfg.Namespace == DefaultNamespace,
		"webhook port":                    *cfg.Webhook.Port == DefaultWebhookPort,
		"leader election on":              *cfg.LeaderElection.LeaderElect,
		"lease namespace":                 cfg.LeaderElection.ResourceNamespace == DefaultNamespace,
		"frameworks left to the registry": cfg.Integrations.Frameworks == nil,
		"kueue label accepted":            *cfg.Integrations.AcceptKueueQueueLabel,
		"qps":                             *cfg.ClientConnection.QPS == DefaultClientQPS,
		"pods ready timeout":              cfg.WaitForPodsReady.Timeout.Duration == 5*time.Minute,
		"fair sharing off":                !cfg.FairSharing.Enable,
		"internal certs on":               *cfg.InternalCertManagement.Enable,
		"metrics secure":                  *cfg.Metrics.SecureServing,
		"balanced placement off":          cfg.TopologyAwareScheduling == nil || !cfg.TopologyAwareScheduling.BalancedPlacement,
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("default %s not set as expected", name)
		}
	}
}

func TestLoadFile(t *testing.T) {
	cases := map[string]struct {
		yaml    string
		wantErr string
		check   func(*Configuration) bool
	}{
		"overrides": {
			yaml: "namespace: other\nintegrations:\n  frameworks: [batch/job]\n  acceptKueueQueueLabel: false\n",
			check: func(c *Configuration) bool {
				return *c.Namespace == "other" && len(c.Integrations.Frameworks) == 1 && !*c.Integrations.AcceptKueueQueueLabel
			},
		},
		"plain metrics": {
			yaml: "metrics:\n  bindAddress: 127.0.0.1:8080\n  secureServing: false\n",
			check: func(c *Configuration) bool {
				return !*c.Metrics.SecureServing && c.Metrics.BindAddress == "127.0.0.1:8080"
			},
		},
		"balanced placement": {
			yaml:  "topologyAwareScheduling:\n  balancedPlacement: true\n",
			check: func(c *Configuration) bool { return c.TopologyAwareScheduling.BalancedPlacement },
		},
		"lease namespace follows namespace": {
			yaml:  "namespace: other\n",
			check: func(c *Configuration) bool { return c.LeaderElection.ResourceNamespace == "other" },
		},
		"negative qps": {
			yaml:    "clientConnection:\n  qps: -1\n",
			wantErr: "clientConnection.qps",
		},
		"backoff max below base": {
			yaml:    "waitForPodsReady:\n  requeuingStrategy:\n    backoffBaseSeconds: 10\n    backoffMaxSeconds: 5\n",
			wantErr: "backoffMaxSeconds",
		},
		"lease shorter than renew": {
			yaml:    "leaderElection:\n  leaseDuration: 5s\n  renewDeadline: 10s\n",
			wantErr: "leaseDuration",
		},
		"usage decay": {
			yaml: "fairSharing:\n  enable: true\n  usage:\n    halfLife: 1h\n    weights:\n      nvidia.com/gpu: \"4\"\n",
			check: func(c *Configuration) bool {
				u := c.FairSharing.Usage
				w := u.Weights["nvidia.com/gpu"]
				return u.HalfLife.Duration == time.Hour && u.SamplingInterval.Duration == DefaultUsageSamplingInterval && w.Value() == 4
			},
		},
		"usage decay without fair sharing": {
			yaml:    "fairSharing:\n  usage:\n    halfLife: 1h\n",
			wantErr: "fairSharing.usage",
		},
		"negative half-life": {
			yaml:    "fairSharing:\n  enable: true\n  usage:\n    halfLife: -1h\n",
			wantErr: "fairSharing.usage.halfLife",
		},
		"unknown field": {
			yaml:    "namespce: typo\n",
			wantErr: "unknown field",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			content := "apiVersion: config.muster.dev/v1beta1\nkind: Configuration\n" + tc.yaml
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(cfg) {
				t.Errorf("unexpected config: %+v", cfg)
			}
		})
	}
}
