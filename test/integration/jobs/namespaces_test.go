package jobs

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// managedOnly is the selector of namespaces labelled for Muster.
var managedOnly = &metav1.LabelSelector{MatchLabels: map[string]string{"muster.dev/managed": "true"}}

// managedJobsNamespaceSelector: Muster gates jobs only in the namespaces it
// selects, and with its job webhooks scoped the same way, a Muster outage
// blocks job creation only there.
func TestOnlyManagedNamespacesAreGated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scopeJobWebhooks(t, managedOnly)
	mgr := env.StartManager(t, func(c *configv1beta1.Configuration) { c.ManagedJobsNamespaceSelector = managedOnly })
	managed := env.NewNamespace(t, "managed", map[string]string{"muster.dev/managed": "true"})
	other := env.NewNamespace(t, "other", nil)
	for _, ns := range []string{managed, other} {
		env.CreateAll(t, MakeLocalQueue("main", ns).ClusterQueue("cq-nowhere").Obj())
	}

	gated := MakeJob("gated", managed).Queue("main").Request(gpu, "1").Obj()
	g.Expect(env.Client.Create(ctx, gated)).To(Succeed())
	g.Expect(isSuspended(gated)).To(BeTrue(), "suspended in a managed namespace")
	left := MakeJob("left-alone", other).Queue("main").Request(gpu, "1").Obj()
	g.Expect(env.Client.Create(ctx, left)).To(Succeed())
	g.Expect(isSuspended(left)).To(BeFalse(), "a job elsewhere is not Muster's")
	consistently(t, func(g Gomega) {
		g.Expect(isSuspended(getJob(g, left))).To(BeFalse(), "nor does the reconciler suspend it")
	})

	mgr.Stop(t) // Muster is down
	g.Expect(env.Client.Create(ctx, MakeJob("during-outage", other).Queue("main").Obj())).To(Succeed(),
		"an outage does not block namespaces Muster does not manage")
	err := env.Client.Create(ctx, MakeJob("blocked", managed).Queue("main").Obj())
	g.Expect(err).To(HaveOccurred(), "the webhooks fail closed where Muster manages jobs")
}

// scopeJobWebhooks gives the job webhooks installed in the API server a
// namespace selector for the test's duration.
func scopeJobWebhooks(t *testing.T, sel *metav1.LabelSelector) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	var mutating admissionregistrationv1.MutatingWebhookConfigurationList
	var validating admissionregistrationv1.ValidatingWebhookConfigurationList
	g.Expect(env.Client.List(ctx, &mutating)).To(Succeed())
	g.Expect(env.Client.List(ctx, &validating)).To(Succeed())
	var restore []client.Object
	for i := range mutating.Items {
		c := &mutating.Items[i]
		restore = append(restore, c.DeepCopy())
		for j := range c.Webhooks {
			if isJobWebhook(c.Webhooks[j].Name) {
				c.Webhooks[j].NamespaceSelector = sel
			}
		}
		g.Expect(env.Client.Update(ctx, c)).To(Succeed())
	}
	for i := range validating.Items {
		c := &validating.Items[i]
		restore = append(restore, c.DeepCopy())
		for j := range c.Webhooks {
			if isJobWebhook(c.Webhooks[j].Name) {
				c.Webhooks[j].NamespaceSelector = sel
			}
		}
		g.Expect(env.Client.Update(ctx, c)).To(Succeed())
	}
	t.Cleanup(func() {
		for _, o := range restore {
			g.Eventually(func() error {
				cur := o.DeepCopyObject().(client.Object)
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
					return err
				}
				o.SetResourceVersion(cur.GetResourceVersion())
				return env.Client.Update(ctx, o)
			}, framework.Timeout, framework.Interval).Should(Succeed())
		}
	})
}

func isJobWebhook(name string) bool {
	for _, kind := range []string{"job.", "pytorchjob.", "raycluster."} {
		if strings.HasPrefix(name, "m"+kind) || strings.HasPrefix(name, "v"+kind) {
			return true
		}
	}
	return false
}
