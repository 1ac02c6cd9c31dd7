// Package manager tests the muster binary as an operator runs it: against a
// real API server, with probes, and stopped by SIGTERM.
package manager

import (
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{Webhooks: true}, &env, false) }
