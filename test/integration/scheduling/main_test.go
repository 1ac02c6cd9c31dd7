// Package scheduling tests cohorts, borrowing, reclaim, priority preemption,
// fair sharing, namespace selection and draining end to end: Jobs on a real
// API server, admitted, preempted and requeued by Muster.
package scheduling

import (
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{Webhooks: true}, &env, false) }
