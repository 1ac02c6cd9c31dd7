package leaderworkerset

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

func set(labels map[string]string, leader bool) *lwsv1.LeaderWorkerSet {
	lws := &lwsv1.LeaderWorkerSet{ObjectMeta: metav1.ObjectMeta{Name: "serve", Namespace: "ns", Labels: labels},
		Spec: lwsv1.LeaderWorkerSetSpec{Replicas: ptr.To[int32](2), StartupPolicy: lwsv1.LeaderCreatedStartupPolicy,
			LeaderWorkerTemplate: lwsv1.LeaderWorkerTemplate{Size: ptr.To[int32](4),
				WorkerTemplate: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "w"}}}}}}
	if leader {
		lws.Spec.LeaderWorkerTemplate.LeaderTemplate = &corev1.PodTemplateSpec{}
	}
	return lws
}

// A queued set's queue and priority class reach both pod templates, in
// either spelling; the user's template labels stay; a set in no queue is
// left as written.
func TestTheQueueReachesBothTemplates(t *testing.T) {
	g := NewWithT(t)
	w := NewWebhook(jobframework.Options{AcceptKueueQueueLabel: true}, nil)
	lws := set(map[string]string{musterv1beta1.KueueQueueNameLabel: "main", musterv1beta1.WorkloadPriorityClassLabel: "high"}, true)
	g.Expect(w.Default(context.Background(), lws)).To(Succeed())
	tmpl := lws.Spec.LeaderWorkerTemplate
	for _, labels := range []map[string]string{tmpl.WorkerTemplate.Labels, tmpl.LeaderTemplate.Labels} {
		g.Expect(labels).To(HaveKeyWithValue(musterv1beta1.KueueQueueNameLabel, "main"))
		g.Expect(labels).To(HaveKeyWithValue(musterv1beta1.WorkloadPriorityClassLabel, "high"))
	}
	g.Expect(tmpl.WorkerTemplate.Labels).To(HaveKeyWithValue("app", "w"))

	plain := set(map[string]string{"team": "a"}, false)
	g.Expect(w.Default(context.Background(), plain)).To(Succeed())
	g.Expect(plain.Spec.LeaderWorkerTemplate.WorkerTemplate.Labels).To(Equal(map[string]string{"app": "w"}))
}

// A set whose workers wait for their leader to run (or be scheduled)
// could never be whole at the gate: refused in a queue, with what to use.
func TestShapesThatCannotBeWholeAreRefused(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ValidateQueued(set(nil, false))).To(BeEmpty())
	ready := set(nil, false)
	ready.Spec.StartupPolicy = lwsv1.LeaderReadyStartupPolicy
	g.Expect(ValidateQueued(ready)).To(ConsistOf(HaveField("Detail", ContainSubstring("use LeaderCreated"))))
	exclusive := set(nil, false)
	exclusive.Annotations = map[string]string{lwsv1.ExclusiveKeyAnnotationKey: "rack"}
	g.Expect(ValidateQueued(exclusive)).To(ConsistOf(HaveField("Detail", ContainSubstring("podset-required-topology"))))

	w := NewWebhook(jobframework.Options{}, nil)
	_, err := w.ValidateCreate(context.Background(), ready)
	g.Expect(err).NotTo(HaveOccurred(), "a set in no queue is not Muster's")
	ready.Labels = map[string]string{musterv1beta1.QueueNameLabel: "main"}
	_, err = w.ValidateCreate(context.Background(), ready)
	g.Expect(err).To(MatchError(ContainSubstring("startupPolicy")))
}
