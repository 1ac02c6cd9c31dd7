// Package jobs tests batch/v1 Jobs gated and admitted whole against a real
// API server, with Muster's webhooks installed.
package jobs

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
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}
