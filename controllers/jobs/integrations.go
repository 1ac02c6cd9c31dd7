// Package jobs is the list of job kinds this binary manages, and what the
// manager and its configuration ask of that list.
//
// The list is explicit, one line per kind, rather than filled by each
// kind's init(): a reader sees every kind in one place, the order (the
// order of setup and of the default frameworks) is the order written, no
// import exists only for its side effect, and tests build registries of
// their own without touching global state.
package jobs

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs/appwrapper"
	"github.com/musterhq/muster/controllers/jobs/job"
	"github.com/musterhq/muster/controllers/jobs/jobset"
	"github.com/musterhq/muster/controllers/jobs/leaderworkerset"
	"github.com/musterhq/muster/controllers/jobs/mpijob"
	"github.com/musterhq/muster/controllers/jobs/pod"
	"github.com/musterhq/muster/controllers/jobs/pytorchjob"
	"github.com/musterhq/muster/controllers/jobs/raycluster"
	"github.com/musterhq/muster/controllers/jobs/rayjob"
	"github.com/musterhq/muster/controllers/jobs/trainjob"
)

// registry holds every kind Muster knows. Adding a kind is one line here
// (docs/job-kinds.md).
var registry = jobframework.MustNewRegistry(
	job.Kind.Integration(),
	pytorchjob.Kind.Integration(),
	raycluster.Kind.Integration(),
	rayjob.Kind.Integration(),
	jobset.Kind.Integration(),
	mpijob.Kind.Integration(),
	pod.Integration(),
	leaderworkerset.Integration(),
	trainjob.Kind.Integration(),
	appwrapper.Kind.Integration(),
)

// Registry returns the registered kinds (generators and tests).
func Registry() *jobframework.Registry { return registry }

// AddToScheme adds the Go types of every registered kind.
func AddToScheme(s *runtime.Scheme) error { return registry.AddToScheme(s) }

// SetDefaults enables the kinds registered EnabledByDefault when the
// configuration names no frameworks. The configuration API knows no kind;
// this is its default for integrations.frameworks.
func SetDefaults(cfg *configv1beta1.Configuration) {
	if cfg.Integrations == nil {
		cfg.Integrations = &configv1beta1.Integrations{}
	}
	if cfg.Integrations.Frameworks == nil {
		cfg.Integrations.Frameworks = registry.DefaultFrameworks()
	}
}

// Validate reports the frameworks of a defaulted configuration (enabled,
// or whose operator makes its pod groups) that no registered kind answers
// to.
func Validate(cfg *configv1beta1.Configuration) field.ErrorList {
	path := field.NewPath("integrations", "frameworks")
	errs := registry.ValidateFrameworks(cfg.Integrations.Frameworks, path)
	errs = append(errs, registry.ValidateRequires(cfg.Integrations.Frameworks, path)...)
	if g := cfg.GangScheduling; g != nil {
		errs = append(errs, registry.ValidateFrameworks(g.OperatorPodGroups, field.NewPath("gangScheduling", "operatorPodGroups"))...)
	}
	return errs
}

// SetupWebhooks registers the webhooks of the enabled kinds.
func SetupWebhooks(mgr ctrl.Manager, cfg *configv1beta1.Configuration, opts jobframework.Options) error {
	return registry.SetupWebhooks(mgr, cfg.Integrations.Frameworks, opts)
}

// SetupControllers registers the reconcilers of the enabled kinds, each
// once its CRD is installed.
func SetupControllers(ctx context.Context, mgr ctrl.Manager, cfg *configv1beta1.Configuration, opts jobframework.Options) error {
	return registry.SetupControllers(ctx, mgr, cfg.Integrations.Frameworks, opts)
}
