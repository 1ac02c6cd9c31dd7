// Package api tests the CRDs' schemas, CEL rules and printer columns against a
// real API server: bad objects are rejected early with a clear message.
package api

import (
	"fmt"
	"os"
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	var err error
	env, err = framework.Start(framework.Options{Webhooks: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The manager serves the validating webhooks of the muster.dev kinds.
	mgr, err := env.StartManagerE()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	code := m.Run()
	if err := mgr.StopE(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}
