// Package api tests the CRDs' schemas, CEL rules and printer columns against a
// real API server: bad objects are rejected early with a clear message.
package api

import (
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{Webhooks: true}, &env, true) }
