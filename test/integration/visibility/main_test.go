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

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
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

// run starts the manager with the visibility API on a free port,
// registers it with the API server, and runs the tests.
func run(m *testing.M) int {
	port := framework.FreePort()
	mgr, err := env.StartManagerE(func(c *configv1beta1.Configuration) {
		c.Visibility.BindAddress = fmt.Sprintf("127.0.0.1:%d", port)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := mgr.StopE(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if err := env.RegisterVisibility(context.Background(), port); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
