// Command kubectl-muster is the kubectl plugin for Muster: `kubectl muster
// list|why|stop|resume|create|top|import-kueue`. Put it on PATH and kubectl
// finds it (make builds it into bin/kubectl-muster).
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"

	"github.com/musterhq/muster/cmd/kubectl-muster/app"
)

func main() {
	cmd := app.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, clock.RealClock{}, nil)
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}
