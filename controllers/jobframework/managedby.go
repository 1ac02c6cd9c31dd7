package jobframework

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// defaultManagedBy hands a new job to the multi-cluster dispatch when the
// ClusterQueue of its queue dispatches (has a muster.dev/multicluster
// check) and the job names no controller of its own, as Kueue's webhook
// does for MultiKueue: a job submitted to such a queue would otherwise run
// in the manager cluster as well as in a worker. A job whose queue is not
// known yet is left alone; the check rejects it if it is not handed over.
func (w *JobWebhook[T]) defaultManagedBy(ctx context.Context, obj T) error {
	mc := w.kind.MultiCluster
	if mc == nil {
		return nil
	}
	if req, err := admission.RequestFromContext(ctx); err == nil && req.Operation != admissionv1.Create {
		return nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	if v, _, _ := unstructured.NestedString(u, mc.ManagedByPath...); v != "" {
		return nil
	}
	dispatches, err := w.queueDispatches(ctx, obj.GetNamespace(), QueueName(obj, w.opts))
	if err != nil || !dispatches {
		return err
	}
	if err := unstructured.SetNestedField(u, mc.ManagedBy, mc.ManagedByPath...); err != nil {
		return err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj); err != nil {
		return err
	}
	log.FromContext(ctx).V(2).Info("Handed a new job to the multi-cluster dispatch", "kind", w.kind.GVK.Kind, "job", klog.KObj(obj), "managedBy", mc.ManagedBy)
	return nil
}

// queueDispatches reports whether a LocalQueue's ClusterQueue has a
// multi-cluster check.
func (w *JobWebhook[T]) queueDispatches(ctx context.Context, namespace, queue string) (bool, error) {
	var lq musterv1beta1.LocalQueue
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: queue}, &lq); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	var cq musterv1beta1.ClusterQueue
	if err := w.reader.Get(ctx, client.ObjectKey{Name: string(lq.Spec.ClusterQueue)}, &cq); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	names := cq.Spec.AdmissionChecks
	if s := cq.Spec.AdmissionChecksStrategy; s != nil {
		for _, r := range s.AdmissionChecks {
			names = append(names, r.Name)
		}
	}
	for _, name := range names {
		var ac musterv1beta1.AdmissionCheck
		err := w.reader.Get(ctx, client.ObjectKey{Name: string(name)}, &ac)
		if client.IgnoreNotFound(err) != nil {
			return false, err
		}
		if err == nil && ac.Spec.ControllerName == musterv1beta1.MultiClusterControllerName {
			return true, nil
		}
	}
	return false, nil
}
