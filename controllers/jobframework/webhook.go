package jobframework

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
)

// JobWebhook is the generic webhook of a job kind: it creates jobs that name
// a queue suspended, and forbids moving a job to another queue while it holds
// quota. It lives beside the generic reconciler because the two share their
// reading of a job (its queue, its Workload's name, whether it holds quota);
// webhooks/ keeps only the validation of the muster.dev API.
type JobWebhook[T client.Object] struct {
	kind   Kind[T]
	opts   Options
	reader client.Reader
}

// SetupWebhook registers the mutating and validating webhooks of a kind. Their
// paths follow from the kind's GVK (/mutate-<group>-<version>-<kind>), as
// the adapter's kubebuilder:webhook markers say.
func SetupWebhook[T client.Object](mgr ctrl.Manager, kind Kind[T], opts Options) error {
	w := NewWebhook(kind, opts, mgr.GetClient())
	return withPaths(ctrl.NewWebhookManagedBy(mgr, kind.New()).WithDefaulter(w).WithValidator(w), kind.WebhookPaths).Complete()
}

// withPaths sets a kind's own webhook paths, if it has them.
func withPaths[T client.Object](b *builder.WebhookBuilder[T], paths *WebhookPaths) *builder.WebhookBuilder[T] {
	if paths == nil {
		return b
	}
	return b.WithDefaulterCustomPath(paths.Mutate).WithValidatorCustomPath(paths.Validate)
}

// NewWebhook returns the webhook of a kind reading namespaces and Workloads
// through reader (the manager's cache; a fake client in unit tests).
func NewWebhook[T client.Object](kind Kind[T], opts Options, reader client.Reader) *JobWebhook[T] {
	return &JobWebhook[T]{kind: kind, opts: opts, reader: reader}
}

// Default suspends a new job that names a queue: it must not create pods
// before its quota is reserved.
func (w *JobWebhook[T]) Default(ctx context.Context, obj T) error {
	if gated, err := w.gated(ctx, obj); !gated || err != nil {
		return err
	}
	job := w.kind.Adapt(obj)
	if !job.IsSuspended() {
		job.Suspend()
		log.FromContext(ctx).V(2).Info("Suspended new job", "kind", w.kind.GVK.Kind, "job", klog.KObj(obj))
	}
	if d, ok := job.(JobWithDefaults); ok {
		d.Default()
	}
	return w.defaultManagedBy(ctx, obj)
}

// ValidateCreate refuses a job in a queue whose kind says Muster cannot
// admit it whole.
func (w *JobWebhook[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	return nil, w.validateQueued(ctx, obj)
}

// gated reports whether Muster gates the job: it names a queue in a managed
// namespace.
func (w *JobWebhook[T]) gated(ctx context.Context, obj T) (bool, error) {
	if QueueName(obj, w.opts) == "" {
		return false, nil
	}
	return w.opts.Manages(ctx, w.reader, obj.GetNamespace())
}

func (w *JobWebhook[T]) validateQueued(ctx context.Context, obj T) error {
	if gated, err := w.gated(ctx, obj); !gated || err != nil {
		return err
	}
	return w.validateShape(ctx, obj, true, true)
}

// validateShape applies the kind's own rules to a gated job, and checks
// its runtime bound when asked: on an update only if the bound changed, so
// a job that got past the webhook with a malformed one (created while it
// was down, or before an upgrade; its workload ignores the bound) can
// still be started and stopped by the reconciler.
func (w *JobWebhook[T]) validateShape(ctx context.Context, obj T, checkBound, create bool) error {
	job := w.kind.Adapt(obj)
	if err := w.loadRelated(ctx, job, create); err != nil {
		return err
	}
	errs := validateTopology(job)
	if checkBound {
		errs = append(errs, validateRuntimeBound(obj, w.opts)...)
	}
	if v, ok := job.(JobWithValidation); ok {
		errs = append(errs, v.ValidateQueued()...)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(w.kind.GVK.GroupKind(), obj.GetName(), errs)
	}
	return nil
}

// loadRelated loads what the kind's pod sets are read from. A new job
// whose pod sets cannot be read would wait without a Workload: it is
// refused while its user is there to read why. On an update a missing
// object leaves only the pod sets unchecked: the reconciler must still be
// able to stop the job.
func (w *JobWebhook[T]) loadRelated(ctx context.Context, job GenericJob, create bool) error {
	l, ok := job.(JobWithRelatedObjects)
	if !ok {
		return nil
	}
	err := l.LoadRelated(ctx, w.reader)
	switch {
	case err == nil || (!create && apierrors.IsNotFound(err)):
		return nil
	case apierrors.IsNotFound(err):
		return apierrors.NewBadRequest(err.Error())
	}
	return err
}

// ValidateUpdate forbids changing the queue of a job that holds quota: the
// quota is reserved in the old queue's ClusterQueue.
func (w *JobWebhook[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	if managed, err := w.opts.Manages(ctx, w.reader, newObj.GetNamespace()); !managed || err != nil {
		return nil, err
	}
	boundChanged := runtimeBoundChanged(oldObj, newObj)
	if QueueName(newObj, w.opts) != "" {
		if err := w.validateShape(ctx, newObj, boundChanged, false); err != nil {
			return nil, err
		}
	}
	if boundChanged && QueueName(oldObj, w.opts) != "" {
		if err := w.boundLocked(ctx, oldObj, newObj); err != nil {
			return nil, err
		}
	}
	oldQueue, newQueue := QueueName(oldObj, w.opts), QueueName(newObj, w.opts)
	if oldQueue == newQueue || oldQueue == "" {
		return nil, nil
	}
	holds, err := w.holdsQuota(ctx, oldObj)
	if err != nil || !holds {
		return nil, err
	}
	path := field.NewPath("metadata", "labels").Key(musterv1beta1.QueueNameLabel)
	return nil, apierrors.NewInvalid(w.kind.GVK.GroupKind(), newObj.GetName(), field.ErrorList{
		field.Forbidden(path, "the queue cannot change while the job holds quota in it; suspend or finish the job first"),
	})
}

// boundLocked refuses a change of the runtime bound while the job holds
// quota: its Workload took the bound at submission (it is carried over
// only while pending), so the change would be silently ignored.
func (w *JobWebhook[T]) boundLocked(ctx context.Context, oldObj, newObj T) error {
	holds, err := w.holdsQuota(ctx, oldObj)
	if err != nil || !holds {
		return err
	}
	return apierrors.NewInvalid(w.kind.GVK.GroupKind(), newObj.GetName(), field.ErrorList{
		field.Forbidden(field.NewPath("metadata", "labels").Key(MaxExecTimeLabel),
			"the maximum execution time (labels "+MaxExecTimeLabel+", "+kueueMaxExecTimeLabel+", annotation "+MaxRuntimeAnnotation+
				") cannot change while the job holds quota: its workload keeps the bound it was admitted with; suspend the job first"),
	})
}

func (w *JobWebhook[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// holdsQuota reports whether a job runs or its Workload holds quota.
func (w *JobWebhook[T]) holdsQuota(ctx context.Context, obj T) (bool, error) {
	if !w.kind.Adapt(obj).IsSuspended() {
		return true, nil
	}
	var wl musterv1beta1.Workload
	key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: WorkloadName(w.kind.GVK.Kind, obj.GetName(), obj.GetUID())}
	if err := w.reader.Get(ctx, key, &wl); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return workload.HoldsQuota(&wl), nil
}
