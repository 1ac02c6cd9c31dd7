package kinds

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
)

// TestDisabledKindIsNeitherGatedNorRefused: a registered kind the
// configuration leaves out keeps its webhooks in the webhook
// configurations; the manager answers them with no-op webhooks, so the
// kind's objects are created as their users wrote them, queue label or not.
func TestDisabledKindIsNeitherGatedNorRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t, func(c *configv1beta1.Configuration) {
		c.Integrations.Frameworks = []string{"batch/job", "kubeflow.org/pytorchjob"}
	})
	ns, _ := setup(t, "8")
	rc := rayCluster("not-gated", ns, 1)
	rc.Spec.Suspend = ptr.To(false)
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true) // refused were the kind enabled
	g.Expect(env.Client.Create(ctx, rc)).To(Succeed())
	g.Expect(ptr.Deref(rc.Spec.Suspend, true)).To(BeFalse(), "not suspended by a disabled kind's webhook")
	g.Consistently(func(g Gomega) {
		g.Expect(ptr.Deref(getRayCluster(g, rc).Spec.Suspend, true)).To(BeFalse())
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed(), "no reconciler for a disabled kind")
}
