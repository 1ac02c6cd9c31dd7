// Package topology tests topology-aware admission on a real API server:
// Nodes and Pods as the cluster would have them, Jobs placed whole in one
// rack or not admitted, pods released onto their nodes by the ungater,
// failed nodes replaced, and the same after a restart. There is no
// kube-scheduler here: the tests read what Muster promised and what it
// wrote on the pods; test/e2e runs the pods for real.
package topology

import (
	"fmt"
	"os"
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var (
	env *framework.Env
	// shared is the manager the tests share; the restart test replaces it.
	shared *framework.Manager
)

func TestMain(m *testing.M) {
	e, err := framework.Start(framework.Options{Webhooks: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env = e
	if shared, err = env.StartManagerE(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	code := m.Run()
	if err := shared.StopE(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	_ = env.Stop()
	os.Exit(code)
}
