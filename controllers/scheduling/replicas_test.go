package scheduling

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

func TestFollowerWritesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	lq := &musterv1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "lq", Namespace: "ns"}}
	base := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(lq).WithStatusSubresource(lq).Build()
	state := NewState()
	c := leaderWrites(base, state)

	write := func(pending int32) {
		var got musterv1beta1.LocalQueue
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(lq), &got)).To(Succeed())
		orig := got.DeepCopy()
		got.Status.PendingWorkloads = pending
		g.Expect(c.Status().Patch(ctx, &got, client.MergeFrom(orig))).To(Succeed())
		got.Labels = map[string]string{"written": "yes"}
		g.Expect(c.Update(ctx, &got)).To(Succeed())
	}
	read := func() *musterv1beta1.LocalQueue {
		var got musterv1beta1.LocalQueue
		g.Expect(base.Get(ctx, client.ObjectKeyFromObject(lq), &got)).To(Succeed())
		return &got
	}

	write(3)
	g.Expect(read().Status.PendingWorkloads).To(BeZero(), "a follower's status write reached the API")
	g.Expect(read().Labels).To(BeEmpty(), "a follower's update reached the API")

	state.leader.leading.Store(true)
	write(3)
	g.Expect(read().Status.PendingWorkloads).To(BeEquivalentTo(3))
	g.Expect(read().Labels).To(HaveKeyWithValue("written", "yes"))
}

func TestNewLeaderReconcilesEveryObjectAgain(t *testing.T) {
	g := NewWithT(t)
	objs := []client.Object{
		&musterv1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}},
		&musterv1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}},
		&musterv1beta1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "f"}},
	}
	reader := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(objs...).Build()
	state := NewState()
	g.Expect(state.Leading()).To(BeFalse())
	state.BecomeLeader(context.Background(), reader)
	g.Expect(state.Leading()).To(BeTrue())
	var names []string
	for range 2 {
		names = append(names, (<-state.leader.resync["localqueue"]).Object.GetName())
	}
	g.Expect(names).To(ConsistOf("a", "b"))
	g.Expect((<-state.leader.resync["resourceflavor"]).Object.GetName()).To(Equal("f"))
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = musterv1beta1.AddToScheme(s)
	return s
}
