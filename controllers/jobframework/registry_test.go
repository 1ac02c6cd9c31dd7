package jobframework_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs/job"
)

// fakeIntegration is an integration whose webhook setups only record that
// they ran.
func fakeIntegration(name, kind string, enabledByDefault bool, setUp *[]string) jobframework.Integration {
	noop := func(ctrl.Manager, jobframework.Options) error { return nil }
	return jobframework.Integration{
		Name:             name,
		EnabledByDefault: enabledByDefault,
		GVK:              schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: kind},
		AddToScheme:      func(*runtime.Scheme) error { return nil },
		SetupWebhook: func(ctrl.Manager, jobframework.Options) error {
			*setUp = append(*setUp, name)
			return nil
		},
		SetupNoopWebhook: func(ctrl.Manager) error {
			*setUp = append(*setUp, "noop "+name)
			return nil
		},
		SetupReconciler: noop,
	}
}

func TestRegistryRefusesAmbiguousIntegrations(t *testing.T) {
	var setUp []string
	a := fakeIntegration("example.com/a", "A", true, &setUp)
	noName := fakeIntegration("", "B", false, &setUp)
	noGVK := fakeIntegration("example.com/b", "", false, &setUp)
	noSetup := fakeIntegration("example.com/b", "B", false, &setUp)
	noSetup.SetupReconciler = nil
	cases := map[string]struct {
		integrations []jobframework.Integration
		wantErr      string
	}{
		"duplicate name": {[]jobframework.Integration{a, fakeIntegration("example.com/a", "B", false, &setUp)}, "integration example.com/a is registered twice"},
		"duplicate GVK":  {[]jobframework.Integration{a, fakeIntegration("example.com/b", "A", false, &setUp)}, "both manage example.com/v1, Kind=A"},
		"no name":        {[]jobframework.Integration{noName}, "has no name"},
		"no GVK":         {[]jobframework.Integration{noGVK}, "has no GVK"},
		"no setup":       {[]jobframework.Integration{noSetup}, "lacks AddToScheme, SetupWebhook, SetupNoopWebhook or SetupReconciler"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := jobframework.NewRegistry(tc.integrations...)
			g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
			g.Expect(func() { jobframework.MustNewRegistry(tc.integrations...) }).To(Panic())
		})
	}
}

func TestRegistryDefaultsToTheKindsEnabledByDefault(t *testing.T) {
	g := NewWithT(t)
	var setUp []string
	r, err := jobframework.NewRegistry(
		fakeIntegration("example.com/a", "A", true, &setUp),
		fakeIntegration("example.com/new", "New", false, &setUp),
		fakeIntegration("example.com/c", "C", true, &setUp),
	)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Names()).To(Equal([]string{"example.com/a", "example.com/new", "example.com/c"}))
	g.Expect(r.DefaultFrameworks()).To(Equal([]string{"example.com/a", "example.com/c"}), "a new kind is opt-in")
}

func TestRegistryValidatesFrameworkNames(t *testing.T) {
	var setUp []string
	r := jobframework.MustNewRegistry(
		fakeIntegration("example.com/a", "A", true, &setUp),
		fakeIntegration("example.com/b", "B", false, &setUp),
	)
	path := field.NewPath("integrations", "frameworks")
	cases := map[string]struct {
		frameworks []string
		want       []string
	}{
		"known":   {frameworks: []string{"example.com/b", "example.com/a"}},
		"none":    {frameworks: []string{}},
		"unknown": {frameworks: []string{"example.com/a", "argo/workflow"}, want: []string{`integrations.frameworks[1]: Unsupported value: "argo/workflow": supported values: "example.com/a", "example.com/b"`}},
		"twice":   {frameworks: []string{"example.com/a", "example.com/a"}, want: []string{`integrations.frameworks[1]: Duplicate value: "example.com/a"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			var got []string
			for _, err := range r.ValidateFrameworks(tc.frameworks, path) {
				got = append(got, err.Error())
			}
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

// TestRegistryServesTheWebhooksOfDisabledKinds: the webhook configurations
// name every registered kind; a disabled one gets webhooks that allow all,
// or the API server would refuse its objects.
func TestRegistryServesTheWebhooksOfDisabledKinds(t *testing.T) {
	g := NewWithT(t)
	var setUp []string
	r := jobframework.MustNewRegistry(
		fakeIntegration("example.com/a", "A", true, &setUp),
		fakeIntegration("example.com/b", "B", true, &setUp),
		fakeIntegration("example.com/c", "C", false, &setUp),
	)
	g.Expect(r.SetupWebhooks(nil, []string{"example.com/c", "example.com/a"}, jobframework.Options{})).To(Succeed())
	g.Expect(setUp).To(Equal([]string{"example.com/a", "noop example.com/b", "example.com/c"}))
}

func TestKindIntegrationCarriesTheKind(t *testing.T) {
	g := NewWithT(t)
	i := job.Kind.Integration()
	g.Expect(i.Name).To(Equal("batch/job"))
	g.Expect(i.EnabledByDefault).To(BeTrue())
	g.Expect(i.GVK).To(Equal(schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}))
	s := runtime.NewScheme()
	g.Expect(i.AddToScheme(s)).To(Succeed())
	g.Expect(s.Recognizes(i.GVK)).To(BeTrue())
}
