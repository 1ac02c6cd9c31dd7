package jobframework

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// SetupNoopWebhook registers, on the same paths, webhooks that allow every
// request of a kind that is registered but not enabled: the webhook
// configurations name every registered kind, and a path nobody serves
// would make the API server refuse the kind's objects (failurePolicy Fail).
func SetupNoopWebhook[T client.Object](mgr ctrl.Manager, kind Kind[T]) error {
	return withPaths(ctrl.NewWebhookManagedBy(mgr, kind.New()).WithDefaulter(allowAll[T]{}).WithValidator(allowAll[T]{}), kind.WebhookPaths).Complete()
}

// allowAll changes and refuses nothing.
type allowAll[T client.Object] struct{}

func (allowAll[T]) Default(context.Context, T) error { return nil }

func (allowAll[T]) ValidateCreate(context.Context, T) (admission.Warnings, error) { return nil, nil }

func (allowAll[T]) ValidateUpdate(context.Context, T, T) (admission.Warnings, error) { return nil, nil }

func (allowAll[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) { return nil, nil }
