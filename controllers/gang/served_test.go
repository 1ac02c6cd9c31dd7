package gang

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

type recordingSink struct{ served map[string]string }

func (s *recordingSink) SetGangServed(p string, served bool, detail string) {
	if served {
		detail = "served"
	}
	s.served[p] = detail
}

func (s *recordingSink) GangsInUse() []string { return nil }

func TestServedChecker(t *testing.T) {
	g := NewWithT(t)
	fake := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	fake.Resources = []*metav1.APIResourceList{
		{GroupVersion: "scheduling.k8s.io/v1beta1", APIResources: []metav1.APIResource{{Name: "workloads"}, {Name: "podgroups"}}},
		{GroupVersion: "scheduling.volcano.sh/v1beta1", APIResources: []metav1.APIResource{{Name: "queues"}}},
	}
	sink := &recordingSink{served: map[string]string{}}
	c := &ServedChecker{Discovery: fake, Sink: sink}
	c.check(t.Context(), []musterv1beta1.GangSchedulerProvider{musterv1beta1.GangKubeScheduler, musterv1beta1.GangVolcano, musterv1beta1.GangKAI})
	g.Expect(sink.served["KubeScheduler"]).To(Equal("served"))
	g.Expect(sink.served["Volcano"]).To(ContainSubstring("does not serve scheduling.volcano.sh/v1beta1 podgroups"), "a group without podgroups")
	g.Expect(sink.served["KAI"]).To(ContainSubstring("gang scheduler KAI is not installed"))
}
