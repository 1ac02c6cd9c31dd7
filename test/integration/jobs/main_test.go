// Package jobs tests batch/v1 Jobs gated and admitted whole against a real
// API server, with Muster's webhooks installed.
package jobs

import (
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{Webhooks: true}, &env, false) }
