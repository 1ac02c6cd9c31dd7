package jobs

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
)

// TestDefaultFrameworksAreTheFirstReleasesThree pins the default that
// existed before the registry: a new kind must not join it by accident.
func TestDefaultFrameworksAreTheFirstReleasesThree(t *testing.T) {
	g := NewWithT(t)
	cfg := &configv1beta1.Configuration{}
	SetDefaults(cfg)
	g.Expect(cfg.Integrations.Frameworks).To(Equal([]string{"batch/job", "kubeflow.org/pytorchjob", "ray.io/raycluster"}))
	g.Expect(Validate(cfg)).To(BeEmpty())
}

func TestSetDefaultsKeepsAnExplicitList(t *testing.T) {
	g := NewWithT(t)
	for _, frameworks := range [][]string{{"ray.io/raycluster"}, {}} {
		cfg := &configv1beta1.Configuration{Integrations: &configv1beta1.Integrations{Frameworks: frameworks}}
		SetDefaults(cfg)
		g.Expect(cfg.Integrations.Frameworks).To(Equal(frameworks))
	}
}

func TestValidateRefusesAnUnknownFramework(t *testing.T) {
	g := NewWithT(t)
	cfg := &configv1beta1.Configuration{Integrations: &configv1beta1.Integrations{Frameworks: []string{"batch/job", "argo/workflow"}}}
	errs := Validate(cfg)
	g.Expect(errs).To(HaveLen(1))
	g.Expect(errs[0].Error()).To(Equal(`integrations.frameworks[1]: Unsupported value: "argo/workflow": ` +
		`supported values: "batch/job", "kubeflow.org/pytorchjob", "ray.io/raycluster", "ray.io/rayjob", "jobset.x-k8s.io/jobset", "kubeflow.org/mpijob", "pod", "leaderworkerset.x-k8s.io/leaderworkerset", "trainer.kubeflow.org/trainjob", "workload.codeflare.dev/appwrapper"`))
}

func TestEveryRegisteredKindIsInTheScheme(t *testing.T) {
	g := NewWithT(t)
	s := runtime.NewScheme()
	g.Expect(AddToScheme(s)).To(Succeed())
	g.Expect(Registry().Integrations()).To(HaveLen(10))
	for _, i := range Registry().Integrations() {
		g.Expect(s.Recognizes(i.GVK)).To(BeTrue(), i.Name)
	}
}

// A LeaderWorkerSet's groups are pod groups: enabling the kind without
// pod is refused, saying so.
func TestLeaderWorkerSetNeedsThePodFramework(t *testing.T) {
	g := NewWithT(t)
	cfg := &configv1beta1.Configuration{Integrations: &configv1beta1.Integrations{Frameworks: []string{"leaderworkerset.x-k8s.io/leaderworkerset"}}}
	errs := Validate(cfg)
	g.Expect(errs).To(HaveLen(1))
	g.Expect(errs[0].Error()).To(ContainSubstring("enable pod too"))
	cfg.Integrations.Frameworks = append(cfg.Integrations.Frameworks, "pod")
	g.Expect(Validate(cfg)).To(BeEmpty())
}
