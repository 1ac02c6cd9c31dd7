package jobframework_test

import (
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
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

// The enabled kinds are parents: a job they control names no queue, so it
// is neither suspended nor given a Workload (its parent's admission holds
// its quota), whatever labels it copied; a disabled kind's child is a job of
// its own.
func TestAJobControlledByAnEnabledKindNamesNoQueue(t *testing.T) {
	g := NewWithT(t)
	var seen jobframework.Options
	parent := fakeIntegration("example.com/parent", "Parent", false, new([]string))
	parent.SetupWebhook = func(_ ctrl.Manager, o jobframework.Options) error { seen = o; return nil }
	other := fakeIntegration("example.com/other", "Other", false, new([]string))
	r := jobframework.MustNewRegistry(parent, other)
	g.Expect(r.SetupWebhooks(nil, []string{"example.com/parent"}, jobframework.Options{})).To(Succeed())

	childOf := func(kind string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "child", Labels: map[string]string{musterv1beta1.QueueNameLabel: "main"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: kind, Name: "p", UID: "u", Controller: ptr.To(true)}}}}
	}
	g.Expect(jobframework.QueueName(childOf("Parent"), seen)).To(BeEmpty(), "an enabled kind's part")
	g.Expect(jobframework.QueueName(childOf("Other"), seen)).To(Equal("main"), "a disabled kind's child is a job of its own")
	notController := childOf("Parent")
	notController.OwnerReferences[0].Controller = nil
	g.Expect(jobframework.QueueName(notController, seen)).To(Equal("main"), "only the controller counts")
}
