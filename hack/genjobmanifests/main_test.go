package main

import (
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs"
)

// fixtureKinds are the registered kinds the manifests below have webhooks
// for: a kind registered later does not change what these tests check.
func fixtureKinds() []jobframework.Integration {
	return slices.DeleteFunc(jobs.Registry().Integrations(), func(i jobframework.Integration) bool {
		return !slices.Contains([]string{"batch/job", "kubeflow.org/pytorchjob", "ray.io/raycluster", "ray.io/rayjob"}, i.Name)
	})
}

const manifests = `---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
webhooks:
- name: mjob.muster.dev
  rules:
  - apiGroups: [batch]
    resources: [jobs]
- name: mpytorchjob.muster.dev
  rules:
  - apiGroups: [kubeflow.org]
    resources: [pytorchjobs]
- name: mraycluster.muster.dev
  rules:
  - apiGroups: [ray.io]
    resources: [rayclusters]
- name: mrayjob.muster.dev
  rules:
  - apiGroups: [ray.io]
    resources: [rayjobs]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
webhooks:
- name: vclusterqueue.muster.dev
  rules:
  - apiGroups: [muster.dev]
    resources: [clusterqueues]
- name: vjob.muster.dev
  rules:
  - apiGroups: [batch]
    resources: [jobs]
- name: vpytorchjob.muster.dev
  rules:
  - apiGroups: [kubeflow.org]
    resources: [pytorchjobs]
- name: vraycluster.muster.dev
  rules:
  - apiGroups: [ray.io]
    resources: [rayclusters]
- name: vrayjob.muster.dev
  rules:
  - apiGroups: [ray.io]
    resources: [rayjobs]
`

func TestJobWebhooksAreTheRegisteredKinds(t *testing.T) {
	g := NewWithT(t)
	mutating, validating, err := jobWebhooks(strings.NewReader(manifests), fixtureKinds())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mutating).To(Equal([]string{"mjob.muster.dev", "mpytorchjob.muster.dev", "mraycluster.muster.dev", "mrayjob.muster.dev"}))
	g.Expect(validating).To(Equal([]string{"vjob.muster.dev", "vpytorchjob.muster.dev", "vraycluster.muster.dev", "vrayjob.muster.dev"}), "not the API's")
}

func TestAKindWithoutWebhookMarkersFails(t *testing.T) {
	g := NewWithT(t)
	withoutRay := manifests[:strings.Index(manifests, "- name: vraycluster")]
	_, _, err := jobWebhooks(strings.NewReader(withoutRay), fixtureKinds())
	g.Expect(err).To(MatchError(ContainSubstring("ray.io/raycluster lacks a mutating or a validating webhook")))
}

func TestUserRolesGrantEveryKind(t *testing.T) {
	g := NewWithT(t)
	roles := string(userRoles(jobs.Registry().Integrations()))
	for _, rule := range []string{"apiGroups: [batch]\n  resources: [jobs]", "apiGroups: [kubeflow.org]\n  resources: [pytorchjobs]", "apiGroups: [ray.io]\n  resources: [rayclusters]"} {
		g.Expect(roles).To(ContainSubstring(rule))
	}
}
