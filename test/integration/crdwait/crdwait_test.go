// Package crdwait tests a manager started before the RayCluster CRD is
// installed: it becomes ready and gates the other kinds, then gates
// RayClusters once the CRD appears, without a restart.
package crdwait

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	framework.Main(m, framework.Options{Webhooks: true, JobCRDs: []string{"pytorchjob"}}, &env, false)
}

const gpu = corev1.ResourceName("nvidia.com/gpu")

func TestIntegrationWaitsForItsCRD(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t) // returns once the webhook server, and so readiness, is up
	ns := env.NewNamespace(t, "crdwait", nil)
	env.CreateAll(t,
		MakeResourceFlavor("f-"+ns).NodeLabel("pool", ns).QuotaOnly().Obj(),
		MakeClusterQueue("cq-"+ns).ResourceGroup(MakeFlavorQuotas("f-"+ns).Resource(gpu, "8").Obj()).Obj(),
		MakeLocalQueue("main", ns).ClusterQueue("cq-"+ns).Obj())

	job := MakeJob("job", ns).Queue("main").Request(gpu, "1").Obj()
	pt := MakePyTorchJob("pytorch", ns).Queue("main").Request("Master", gpu, "1").Obj()
	g.Expect(env.Client.Create(ctx, job)).To(Succeed())
	g.Expect(env.Client.Create(ctx, pt)).To(Succeed())
	env.ExpectJobRunning(t, job, map[string]string{"pool": ns})
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pt), pt)).To(Succeed())
		g.Expect(ptr.Deref(pt.Spec.RunPolicy.Suspend, true)).To(BeFalse())
		g.Expect(pt.Spec.PyTorchReplicaSpecs["Master"].Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
	}, framework.Timeout, framework.Interval).Should(Succeed(), "PyTorchJob gated while RayCluster waits for its CRD")

	g.Expect(env.InstallCRDs(framework.JobCRDDir("raycluster"))).To(Succeed())
	rc := MakeRayCluster("ray", ns).Queue("main").HeadRequest(gpu, "1").Obj()
	g.Expect(env.Client.Create(ctx, rc)).To(Succeed())
	g.Expect(ptr.Deref(rc.Spec.Suspend, false)).To(BeTrue(), "the webhook serves the new kind at once")
	g.Eventually(func(g Gomega) {
		var got rayv1.RayCluster
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(rc), &got)).To(Succeed())
		g.Expect(ptr.Deref(got.Spec.Suspend, true)).To(BeFalse())
		g.Expect(got.Spec.HeadGroupSpec.Template.Spec.NodeSelector).To(HaveKeyWithValue("pool", ns))
	}, 30*time.Second, framework.Interval).Should(Succeed(), "the RayCluster controller started once the CRD appeared")
}
