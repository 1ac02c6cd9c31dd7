package scheduling

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// A LocalQueue deleted and recreated pointing at another ClusterQueue
// takes its pending workloads with it.
func TestLocalQueueRecreatedElsewhereMovesItsWorkloads(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	w := newWorld(t)
	w.queue(t, "small", "1")
	big := MakeClusterQueue("big-" + w.ns).ResourceGroup(MakeFlavorQuotas(w.flavor).Resource(gpu, "4").Obj()).Obj()
	env.CreateAll(t, big)
	j := w.job("moved", "small", "2")
	create(t, j)
	env.ExpectJobPending(t, j, "2 requested")

	lq := &musterv1beta1.LocalQueue{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: "small"}, lq)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, lq)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(lq), lq)) },
		framework.Timeout, framework.Interval).Should(BeTrue())
	create(t, MakeLocalQueue("small", w.ns).ClusterQueue(big.Name).Obj())
	running(t, j)
	g.Expect(env.WorkloadOfJob(g, j).Status.Admission.ClusterQueue).To(BeEquivalentTo(big.Name))
}
