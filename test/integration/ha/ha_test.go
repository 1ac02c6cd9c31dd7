// Package ha tests two Muster managers with leader election against one API
// server (P11): only the leader admits; when it stops, the other takes over
// within the lease and quota still holds.
package ha

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{Aggregation: true}, &env, false) }

func electing(c *configv1beta1.Configuration) {
	c.LeaderElection = &configv1beta1.LeaderElectionConfig{
		LeaderElect: ptr.To(true), ResourceNamespace: "default", ResourceName: "muster-ha-test",
		LeaseDuration: &metav1.Duration{Duration: 3 * time.Second},
		RenewDeadline: &metav1.Duration{Duration: 2 * time.Second},
		RetryPeriod:   &metav1.Duration{Duration: 500 * time.Millisecond},
	}
	configv1beta1.SetDefaults(c)
}

func isLeader(m *framework.Manager) bool {
	select {
	case <-m.Elected():
		return true
	default:
		return false
	}
}

func TestOnlyTheLeaderAdmitsAndTheOtherTakesOver(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	first := env.StartManager(t, electing)
	g.Eventually(func() bool { return isLeader(first) }, framework.Timeout, framework.Interval).Should(BeTrue())
	second := env.StartManager(t, electing)
	g.Consistently(func() bool { return isLeader(second) }, 2*time.Second, 100*time.Millisecond).Should(BeFalse(), "one leader at a time")

	ns := env.NewNamespace(t, "ha", nil)
	env.CreateAll(t,
		MakeResourceFlavor("f-"+ns).QuotaOnly().Obj(),
		MakeClusterQueue("cq-"+ns).ResourceGroup(MakeFlavorQuotas("f-"+ns).Resource(corev1.ResourceCPU, "4").Obj()).Obj(),
		MakeLocalQueue("main", ns).ClusterQueue("cq-"+ns).Obj())
	workload := func(name string) *musterv1beta1.Workload {
		return MakeWorkload(name, ns).Queue("main").Request(corev1.ResourceCPU, "2").Obj()
	}
	admitted := func(g Gomega) []string {
		var wls musterv1beta1.WorkloadList
		g.Expect(env.Client.List(ctx, &wls, client.InNamespace(ns))).To(Succeed())
		var out []string
		for _, wl := range wls.Items {
			if wl.Status.Admission != nil {
				out = append(out, wl.Name)
			}
		}
		return out
	}
	env.CreateAll(t, workload("before"))
	g.Eventually(admitted, framework.Timeout, framework.Interval).Should(ConsistOf("before"))

	failover := time.Now()
	first.Stop(t) // releases the lease on the way out
	g.Eventually(func() bool { return isLeader(second) }, 10*time.Second, 50*time.Millisecond).Should(BeTrue())
	t.Logf("the second manager led %s after the first stopped", time.Since(failover).Round(10*time.Millisecond))

	for i := range 3 {
		env.CreateAll(t, workload(fmt.Sprintf("after-%d", i)))
	}
	g.Eventually(func(g Gomega) int { return len(admitted(g)) }, framework.Timeout, framework.Interval).Should(Equal(2),
		"4 CPUs: the new leader admits one more 2-CPU workload, never more")
	g.Consistently(func(g Gomega) int { return len(admitted(g)) }, 2*time.Second, 100*time.Millisecond).Should(Equal(2))
}
