// Package kinds tests the PyTorchJob and RayCluster integrations against a
// real API server with their CRDs (from the module cache) and Muster's
// webhooks installed.
package kinds

import (
	"fmt"
	"os"
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	var err error
	env, err = framework.Start(framework.Options{Webhooks: true, JobCRDs: []string{"pytorchjob", "raycluster"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}
