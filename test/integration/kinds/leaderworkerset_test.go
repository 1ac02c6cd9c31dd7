package kinds

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

func leaderWorkerSet(name, ns string, size int32) *lwsv1.LeaderWorkerSet {
	worker := MakePod("w", ns).Request(gpu, "1").Obj()
	return &lwsv1.LeaderWorkerSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{musterv1beta1.KueueQueueNameLabel: "main"}},
		Spec: lwsv1.LeaderWorkerSetSpec{Replicas: ptr.To[int32](2), StartupPolicy: lwsv1.LeaderCreatedStartupPolicy,
			LeaderWorkerTemplate: lwsv1.LeaderWorkerTemplate{Size: ptr.To(size), RestartPolicy: lwsv1.RecreateGroupOnPodRestart,
				WorkerTemplate: corev1.PodTemplateSpec{Spec: worker.Spec}},
			RolloutStrategy: lwsv1.RolloutStrategy{Type: lwsv1.RollingUpdateStrategyType}}}
}

// groupPods are the Pods the LeaderWorkerSet controller makes for one
// group, from the set's worker template as it was admitted.
func groupPods(lws *lwsv1.LeaderWorkerSet, index int) []*corev1.Pod {
	t := lws.Spec.LeaderWorkerTemplate.WorkerTemplate
	size := int(*lws.Spec.LeaderWorkerTemplate.Size)
	var pods []*corev1.Pod
	for w := range size {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d-%d", lws.Name, index, w), Namespace: lws.Namespace,
			Labels:      map[string]string{lwsv1.SetNameLabelKey: lws.Name, lwsv1.GroupIndexLabelKey: fmt.Sprint(index), lwsv1.WorkerIndexLabelKey: fmt.Sprint(w)},
			Annotations: map[string]string{lwsv1.SizeAnnotationKey: fmt.Sprint(size)}}, Spec: *t.Spec.DeepCopy()}
		for k, v := range t.Labels {
			p.Labels[k] = v
		}
		pods = append(pods, p)
	}
	return pods
}

// A queued LeaderWorkerSet's templates carry its queue, so its Pods are
// gated; each group is one Workload, admitted whole: with quota for one
// group, the first runs and the second waits whole. Its ways to make a
// group that can never be whole are refused.
func TestLeaderWorkerSetGroupsAreAdmittedWhole(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env.StartManager(t)
	ns, _ := setup(t, "4")
	lws := leaderWorkerSet("serve", ns, 4)
	g.Expect(env.Client.Create(ctx, lws)).To(Succeed())
	g.Expect(lws.Spec.LeaderWorkerTemplate.WorkerTemplate.Labels).To(HaveKeyWithValue(musterv1beta1.KueueQueueNameLabel, "main"))

	first, second := groupPods(lws, 0), groupPods(lws, 1)
	createPods(t, first...)
	createPods(t, second...)
	eventually(t, func(g Gomega) {
		g.Expect(workload.IsAdmitted(groupWorkload(g, ns, "leaderworkerset-serve-0"))).To(BeTrue())
		for _, p := range first {
			g.Expect(admissionGated(getPod(g, p))).To(BeFalse(), "pod %s of the first group runs", p.Name)
		}
		pendingWith(g, groupWorkload(g, ns, "leaderworkerset-serve-1"), "nvidia.com/gpu")
	})
	for _, p := range second {
		g.Expect(admissionGated(getPod(g, p))).To(BeTrue(), "pod %s of the second group waits", p.Name)
	}

	// Scaled down, the first group's Pods go: its Workload with them, and
	// the second group gets the quota.
	for _, p := range first {
		g.Expect(env.Client.Delete(ctx, p)).To(Succeed())
	}
	eventually(t, func(g Gomega) {
		var wl musterv1beta1.Workload
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "leaderworkerset-serve-0"}, &wl)
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err).To(HaveOccurred(), "the first group's workload is gone")
		g.Expect(admissionGated(getPod(g, second[0]))).To(BeFalse())
	})

	ready := leaderWorkerSet("ready", ns, 2)
	ready.Spec.StartupPolicy = lwsv1.LeaderReadyStartupPolicy
	g.Expect(env.Client.Create(ctx, ready)).To(MatchError(ContainSubstring("use LeaderCreated")))
}
