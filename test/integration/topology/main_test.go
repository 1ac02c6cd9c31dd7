// Package topology tests topology-aware admission on a real API server:
// Nodes and Pods as the cluster would have them, Jobs placed whole in one
// rack or not admitted, pods released onto their nodes by the ungater,
// failed nodes replaced, and the same after a restart. There is no
// kube-scheduler here: the tests read what Muster promised and what it
// wrote on the pods; test/e2e runs the pods for real.
package topology

import (
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{Webhooks: true}, &env, true) }
