package jobframework

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Integration is one job kind as the manager sees it, whatever its Go type:
// everything that used to be a hand edit outside the kind's adapter (the
// manager's scheme, the framework name the configuration accepts, whether it
// is on by default, the webhook and reconciler setup, which CRD to wait
// for). Build it with Kind.Integration; register it in controllers/jobs.
type Integration struct {
	// Name is the framework name in integrations.frameworks, e.g. batch/job.
	Name string
	// EnabledByDefault puts the kind in integrations.frameworks when the
	// configuration names none. A new kind is opt-in: false unless its
	// adapter says otherwise.
	EnabledByDefault bool
	// GVK is the job's group, version and kind. The kind's controller starts
	// once the API server serves it (its CRD is installed).
	GVK schema.GroupVersionKind
	// AddToScheme adds the job's Go types to the manager's scheme.
	AddToScheme func(*runtime.Scheme) error
	// CRD is where the kind's CRD is published (nil for a built-in kind),
	// for the tools that install it in test clusters.
	CRD *CRDSource
	// SetupWebhook registers the kind's generic mutating and validating
	// webhooks.
	SetupWebhook func(ctrl.Manager, Options) error
	// SetupNoopWebhook registers webhooks on the same paths that allow
	// everything, for a kind the configuration does not enable.
	SetupNoopWebhook func(ctrl.Manager) error
	// SetupReconciler registers the kind's generic reconciler.
	SetupReconciler func(ctrl.Manager, Options) error
	// Requires are the frameworks that must be enabled with this one (a
	// LeaderWorkerSet's groups are admitted as pod groups: pod), and
	// RequiresWhy says why, for the error that names them.
	Requires    []string
	RequiresWhy string
	// MultiCluster, when set, is how a multi-cluster check dispatches the
	// kind's jobs.
	MultiCluster *MultiCluster
}

// Integration is the kind as the registry takes it: the generic webhook and
// reconciler over its adapter, with the job's Go type kept in the closures.
func (k Kind[T]) Integration() Integration {
	return Integration{
		Name:             k.Framework,
		EnabledByDefault: k.EnabledByDefault,
		GVK:              k.GVK,
		AddToScheme:      k.AddToScheme,
		CRD:              k.CRD,
		MultiCluster:     k.MultiCluster,
		SetupWebhook:     func(mgr ctrl.Manager, opts Options) error { return SetupWebhook(mgr, k, opts) },
		SetupNoopWebhook: func(mgr ctrl.Manager) error { return SetupNoopWebhook(mgr, k) },
		SetupReconciler: func(mgr ctrl.Manager, opts Options) error {
			return NewReconciler(mgr, k, opts).SetupWithManager(mgr)
		},
	}
}

// Registry is the job kinds one binary can manage, in registration order
// (the order their controllers and webhooks are set up in).
type Registry struct {
	integrations []Integration
}

// NewRegistry checks the integrations and returns their registry. It
// refuses an integration without a name, a GVK or a setup function, and
// two integrations with the same name or GVK: either would make the
// configuration ambiguous or register a webhook path twice.
func NewRegistry(integrations ...Integration) (*Registry, error) {
	r := &Registry{}
	for _, i := range integrations {
		if err := r.add(i); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// MustNewRegistry is NewRegistry for a package-level list, which is either
// right or a programming error.
func MustNewRegistry(integrations ...Integration) *Registry {
	r, err := NewRegistry(integrations...)
	if err != nil {
		panic(err)
	}
	return r
}

func (r *Registry) add(i Integration) error {
	if i.Name == "" {
		return fmt.Errorf("integration for %s has no name", i.GVK)
	}
	if i.GVK.Kind == "" || i.GVK.Version == "" {
		return fmt.Errorf("integration %s has no GVK", i.Name)
	}
	if i.AddToScheme == nil || i.SetupWebhook == nil || i.SetupNoopWebhook == nil || i.SetupReconciler == nil {
		return fmt.Errorf("integration %s lacks AddToScheme, SetupWebhook, SetupNoopWebhook or SetupReconciler", i.Name)
	}
	for _, have := range r.integrations {
		if have.Name == i.Name {
			return fmt.Errorf("integration %s is registered twice", i.Name)
		}
		if have.GVK == i.GVK {
			return fmt.Errorf("integrations %s and %s both manage %s", have.Name, i.Name, i.GVK)
		}
	}
	r.integrations = append(r.integrations, i)
	return nil
}

// Integrations lists the registered integrations, in order (generators
// and tests read it).
func (r *Registry) Integrations() []Integration { return slices.Clone(r.integrations) }

// Names lists every registered framework name.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.integrations))
	for _, i := range r.integrations {
		names = append(names, i.Name)
	}
	return names
}

// DefaultFrameworks lists the frameworks enabled when the configuration
// names none: those registered EnabledByDefault.
func (r *Registry) DefaultFrameworks() []string {
	var names []string
	for _, i := range r.integrations {
		if i.EnabledByDefault {
			names = append(names, i.Name)
		}
	}
	return names
}

// ValidateFrameworks reports every framework of the configuration that is
// not registered, with the registered names, and every one listed twice.
func (r *Registry) ValidateFrameworks(frameworks []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	known := r.Names()
	for i, f := range frameworks {
		switch {
		case !slices.Contains(known, f):
			errs = append(errs, field.NotSupported(path.Index(i), f, known))
		case slices.Index(frameworks, f) < i:
			errs = append(errs, field.Duplicate(path.Index(i), f))
		}
	}
	return errs
}

// ValidateRequires refuses an enabled framework whose required frameworks
// are not enabled with it.
func (r *Registry) ValidateRequires(frameworks []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, i := range r.integrations {
		if !slices.Contains(frameworks, i.Name) {
			continue
		}
		for _, need := range i.Requires {
			if !slices.Contains(frameworks, need) {
				errs = append(errs, field.Invalid(path, frameworks, i.Name+" "+i.RequiresWhy+": enable "+need+" too"))
			}
		}
	}
	return errs
}

// AddToScheme adds the Go types of every registered kind, enabled or not:
// the scheme does not depend on the configuration.
func (r *Registry) AddToScheme(s *runtime.Scheme) error {
	for _, i := range r.integrations {
		if err := i.AddToScheme(s); err != nil {
			return fmt.Errorf("adding the %s types to the scheme: %w", i.Name, err)
		}
	}
	return nil
}

// enabled lists the registered integrations the configuration enables, in
// registration order.
// withParents is opts with the enabled kinds as the parents whose parts
// are not jobs of their own (Options.ParentKinds).
func (r *Registry) withParents(frameworks []string, opts Options) Options {
	opts.ParentKinds = map[schema.GroupKind]bool{}
	for _, i := range r.enabled(frameworks) {
		opts.ParentKinds[i.GVK.GroupKind()] = true
	}
	return opts
}

func (r *Registry) enabled(frameworks []string) []Integration {
	var out []Integration
	for _, i := range r.integrations {
		if slices.Contains(frameworks, i.Name) {
			out = append(out, i)
		}
	}
	return out
}

// SetupWebhooks registers the webhooks of every registered kind, whether
// its CRD exists or not (the API server calls them only once it does): the
// generic ones for the enabled kinds, no-op ones for the others, which the
// webhook configurations name too.
func (r *Registry) SetupWebhooks(mgr ctrl.Manager, frameworks []string, opts Options) error {
	opts = r.withParents(frameworks, opts)
	for _, i := range r.integrations {
		setup := func() error { return i.SetupNoopWebhook(mgr) }
		if slices.Contains(frameworks, i.Name) {
			setup = func() error { return i.SetupWebhook(mgr, opts) }
		}
		if err := setup(); err != nil {
			return fmt.Errorf("setting up the %s webhook: %w", i.Name, err)
		}
	}
	return nil
}

// SetupControllers registers the Workload owner index and the reconcilers
// of the enabled kinds. A kind whose CRD is not installed gets its
// controller when the CRD appears; the manager starts, and serves the other
// kinds, meanwhile.
func (r *Registry) SetupControllers(ctx context.Context, mgr ctrl.Manager, frameworks []string, opts Options) error {
	if err := SetupOwnerIndex(ctx, mgr); err != nil {
		return err
	}
	opts = r.withParents(frameworks, opts)
	for _, i := range r.enabled(frameworks) {
		if crdInstalled(mgr.GetRESTMapper(), i.GVK) {
			if err := i.SetupReconciler(mgr, opts); err != nil {
				return fmt.Errorf("setting up the %s reconciler: %w", i.Name, err)
			}
			continue
		}
		if err := mgr.Add(&crdWaiter{mgr: mgr, integration: i, opts: opts}); err != nil {
			return err
		}
	}
	return nil
}
