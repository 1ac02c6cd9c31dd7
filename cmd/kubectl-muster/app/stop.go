package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// newStopCommand is stop (stop true) or resume: they set a queue's
// stopPolicy, as kueuectl's commands of the same names do.
func newStopCommand(o *Options, stop bool) *cobra.Command {
	keepRunning := false
	verb, short := "resume", "Let a stopped queue admit again (stopPolicy: None)"
	if stop {
		verb, short = "stop", "Stop a queue admitting (stopPolicy: HoldAndDrain, or Hold with --keep-already-running)"
	}
	cmd := &cobra.Command{
		Use:   verb + " (clusterqueue|localqueue) NAME",
		Short: short,
		Example: fmt.Sprintf(`  kubectl muster %[1]s clusterqueue gpu-a
  kubectl muster %[1]s localqueue main -n team-a`, verb),
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			policy := musterv1beta1.None
			if stop {
				policy = musterv1beta1.HoldAndDrain
				if keepRunning {
					policy = musterv1beta1.Hold
				}
			}
			obj, err := queueObject(o, args[0], args[1])
			if err != nil {
				return usageError(cmd, "%v", err)
			}
			return o.setStopPolicy(cmd.Context(), obj, policy)
		},
	}
	if stop {
		cmd.Flags().BoolVar(&keepRunning, "keep-already-running", false, "Let admitted workloads run on; only stop admitting new ones (Hold).")
	}
	return cmd
}

// queueObject is the queue a kind and name on the command line mean.
func queueObject(o *Options, kind, name string) (client.Object, error) {
	switch kind {
	case "clusterqueue", "clusterqueues", "cq":
		q := &musterv1beta1.ClusterQueue{}
		q.Name = name
		return q, nil
	case "localqueue", "localqueues", "lq":
		ns, err := o.Namespace()
		if err != nil {
			return nil, err
		}
		q := &musterv1beta1.LocalQueue{}
		q.Name, q.Namespace = name, ns
		return q, nil
	}
	return nil, fmt.Errorf("unknown kind %q: want clusterqueue or localqueue", kind)
}

func (o *Options) setStopPolicy(ctx context.Context, obj client.Object, policy musterv1beta1.StopPolicy) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	patch := fmt.Appendf(nil, `{"spec":{"stopPolicy":%q}}`, policy)
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return err
	}
	kind := "clusterqueue"
	if _, ok := obj.(*musterv1beta1.LocalQueue); ok {
		kind = "localqueue"
	}
	_, err = fmt.Fprintf(o.Out, "%s/%s stopPolicy set to %s\n", kind, obj.GetName(), policy)
	return err
}
