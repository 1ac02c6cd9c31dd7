package jobframework

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// kueuePriorityClassLabel is Kueue's label naming a WorkloadPriorityClass.
const kueuePriorityClassLabel = "kueue.x-k8s.io/priority-class"

// setPriority takes the workload's priority from the job's
// WorkloadPriorityClass label, else from the pod template's PriorityClass,
// else leaves it 0.
func (r *Reconciler[T]) setPriority(ctx context.Context, job client.Object, wl *musterv1beta1.Workload) error {
	return SetPriority(ctx, r.client, r.opts, job.GetLabels(), wl)
}

// SetPriority sets a workload's priority from its job's labels and its pod
// sets' PriorityClass (setPriority).
func SetPriority(ctx context.Context, c client.Reader, opts Options, jobLabels map[string]string, wl *musterv1beta1.Workload) error {
	name := jobLabels[musterv1beta1.WorkloadPriorityClassLabel]
	if name == "" && opts.AcceptKueueQueueLabel {
		name = jobLabels[kueuePriorityClassLabel]
	}
	if name != "" {
		var wpc musterv1beta1.WorkloadPriorityClass
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &wpc); err != nil {
			return fmt.Errorf("looking up WorkloadPriorityClass %s: %w", name, err)
		}
		wl.Spec.PriorityClassName = name
		wl.Spec.PriorityClassSource = musterv1beta1.WorkloadPriorityClassSource
		wl.Spec.Priority = &wpc.Value
		return nil
	}
	for _, ps := range wl.Spec.PodSets {
		pcName := ps.Template.Spec.PriorityClassName
		if pcName == "" {
			continue
		}
		var pc schedulingv1.PriorityClass
		if err := c.Get(ctx, client.ObjectKey{Name: pcName}, &pc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		wl.Spec.PriorityClassName = pcName
		wl.Spec.PriorityClassSource = musterv1beta1.PodPriorityClassSource
		wl.Spec.Priority = &pc.Value
		return nil
	}
	return nil
}
