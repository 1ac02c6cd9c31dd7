// Package app is kubectl-muster: the commands, on cobra and cli-runtime as
// kubectl's own are (the usual --kubeconfig, --context, -n flags, the
// -o json|yaml|jsonpath printers), reading Muster's API and its visibility
// API through the user's own credentials.
package app

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
)

// Scheme holds the types the plugin reads and prints.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(musterv1beta1.AddToScheme(Scheme))
	utilruntime.Must(visibilityv1beta1.AddToScheme(Scheme))
}

// Options is what every command shares: where the cluster is, where to
// write, and the clock that ages are taken from.
type Options struct {
	Flags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams
	Clock clock.PassiveClock
}

// RESTConfig is the user's client configuration.
func (o *Options) RESTConfig() (*rest.Config, error) { return o.Flags.ToRESTConfig() }

// Client is a client for Muster's and Kubernetes' types.
func (o *Options) Client() (client.Client, error) {
	cfg, err := o.RESTConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: Scheme})
}

// Dynamic is a dynamic client (import-kueue reads Kueue's objects through
// it, without Kueue's Go types).
func (o *Options) Dynamic() (dynamic.Interface, error) {
	cfg, err := o.RESTConfig()
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(cfg)
}

// Namespace is the namespace of -n, or the kubeconfig context's.
func (o *Options) Namespace() (string, error) {
	ns, _, err := o.Flags.ToRawKubeConfigLoader().Namespace()
	return ns, err
}

// NewCommand returns the root command. flags may be nil (the usual
// kubectl flags are then made); tests pass their own.
func NewCommand(streams genericiooptions.IOStreams, clk clock.PassiveClock, flags *genericclioptions.ConfigFlags) *cobra.Command {
	if flags == nil {
		flags = genericclioptions.NewConfigFlags(true).WithDiscoveryQPS(50)
	}
	o := &Options{Flags: flags, IOStreams: streams, Clock: clk}
	cmd := &cobra.Command{
		Use:   "kubectl-muster",
		Short: "See and manage Muster's queues: where jobs wait, why, and who uses the quota",
		Long: `kubectl muster reads Muster's queues with your own credentials.

  kubectl muster list workloads -A      pending and admitted workloads, with positions
  kubectl muster why job/train          why a job waits, and what must finish for it to run
  kubectl muster top                    usage against quota, per queue and flavor
  kubectl muster stop localqueue main   hold a queue (resume to undo)
  kubectl muster import-kueue --dry-run the Muster equivalents of a cluster's Kueue objects`,
		SilenceUsage:  true,
		SilenceErrors: false,
		CompletionOptions: cobra.CompletionOptions{
			DisableDefaultCmd: true,
		},
	}
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	flags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(
		newListCommand(o),
		newWhyCommand(o),
		newStopCommand(o, true),
		newStopCommand(o, false),
		newCreateCommand(o),
		newTopCommand(o),
		newImportKueueCommand(o),
	)
	return cmd
}

// usageError is a mistake in the command line, said before any request.
func usageError(cmd *cobra.Command, format string, args ...any) error {
	return fmt.Errorf("%s\nSee '%s --help'", fmt.Sprintf(format, args...), cmd.CommandPath())
}
