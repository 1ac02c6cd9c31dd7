// Package scheduling tests cohorts, borrowing, reclaim, priority preemption,
// fair sharing, namespace selection and draining end to end: Jobs on a real
// API server, admitted, preempted and requeued by Muster.
package scheduling

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
	_ = env.Stop()
	os.Exit(code)
}
