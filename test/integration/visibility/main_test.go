// Package visibility tests visibility.muster.dev through the real
// kube-apiserver: the aggregator proxies to the manager's API server,
// which answers from the scheduler's queues and asks the API server
// whether the user may see them.
package visibility

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	e, err := framework.Start(framework.Options{Webhooks: true, Aggregation: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env = e
	code := run(m)
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}

// run starts the manager with the visibility API, registered with the API
// server, and runs the tests.
func run(m *testing.M) int {
	mgr, err := env.StartManagerWithVisibility(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := mgr.StopE(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	return m.Run()
}
