package gang

import (
	"context"
	"testing"
	"time"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/gang"
	. "github.com/musterhq/muster/test/builder"
)

// kaiPodGroupCRD stands in for KAI's PodGroup CRD (scheduling.run.ai),
// which is how Muster tells KAI is installed; Muster creates none.
func kaiPodGroupCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "podgroups.scheduling.run.ai"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "scheduling.run.ai", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "podgroups", Singular: "podgroup", Kind: "PodGroup", ListKind: "PodGroupList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v2alpha2", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}},
			}},
		},
	}
}

func activeReason(g Gomega, cq string) string {
	var q musterv1beta1.ClusterQueue
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: cq}, &q)).To(Succeed())
	for _, c := range q.Status.Conditions {
		if c.Type == musterv1beta1.ClusterQueueActive {
			return c.Reason
		}
	}
	return ""
}

// A queue whose gang scheduler is not installed admits nothing and says
// so; installing it activates the queue. Then KAI gets its labels and
// schedulerName, and a PyTorchJob its minAvailable, and no pod group.
func TestKAIMissingThenInstalled(t *testing.T) {
	q := newGangQueue(t, musterv1beta1.GangKAI, "", "8")
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		g.Expect(activeReason(g, q.cq)).To(Equal(musterv1beta1.ReasonGangSchedulerNotFound))
	}).Should(Succeed())
	job := MakeJob("train", q.ns).Queue(q.lq).Label(gang.KAIQueueLabel, "team-a").Parallelism(2).Request(gpu, "1").Obj()
	env.CreateAll(t, job)
	env.ExpectJobPending(t, job, "gang scheduler KAI is not installed")

	env.CreateAll(t, kaiPodGroupCRD())
	g.Eventually(func(g Gomega) {
		g.Expect(activeReason(g, q.cq)).To(Equal(musterv1beta1.ReasonReady))
	}, 20*time.Second, 250*time.Millisecond).Should(Succeed(), "installing the gang scheduler activates its queue within the check interval (5 s)")
	var started = job
	g.Eventually(func(g Gomega) {
		started = env.GetJob(g, job)
		g.Expect(started.Spec.Suspend).To(Equal(ptr.To(false)))
	}).Should(Succeed())
	g.Expect(started.Spec.Template.Labels).To(HaveKeyWithValue(gang.KAIQueueLabel, "team-a"))
	g.Expect(started.Spec.Template.Annotations).To(HaveKeyWithValue(musterv1beta1.SchedulerNameAnnotation, "kai-scheduler"))
	pod := podOf(t, started, "train-0")
	g.Expect(pod.Spec.SchedulerName).To(Equal("kai-scheduler"))

	pj := MakePyTorchJob("ddp", q.ns).Queue(q.lq).Replicas(kftraining.PyTorchJobReplicaTypeWorker, 3).
		Request(kftraining.PyTorchJobReplicaTypeMaster, gpu, "1").Request(kftraining.PyTorchJobReplicaTypeWorker, gpu, "1").Obj()
	env.CreateAll(t, pj)
	g.Eventually(func(g Gomega) {
		var cur kftraining.PyTorchJob
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(pj), &cur)).To(Succeed())
		g.Expect(cur.Spec.RunPolicy.Suspend).To(Equal(ptr.To(false)))
		g.Expect(cur.Spec.RunPolicy.SchedulingPolicy).NotTo(BeNil())
		g.Expect(cur.Spec.RunPolicy.SchedulingPolicy.MinAvailable).To(Equal(ptr.To[int32](4)), "KAI's podgrouper reads minAvailable")
		g.Expect(cur.Spec.PyTorchReplicaSpecs[kftraining.PyTorchJobReplicaTypeWorker].Template.Labels).To(HaveKeyWithValue(gang.KAIQueueLabel, "default"))
	}).Should(Succeed())

	// Evicted: the job's own minAvailable (none) and template come back.
	var wls musterv1beta1.WorkloadList
	g.Expect(env.Client.List(context.Background(), &wls, client.InNamespace(q.ns))).To(Succeed())
	for i := range wls.Items {
		if wls.Items[i].Name != env.WorkloadOfJob(g, started).Name {
			deactivate(t, &wls.Items[i])
		}
	}
	g.Eventually(func(g Gomega) {
		var cur kftraining.PyTorchJob
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(pj), &cur)).To(Succeed())
		g.Expect(cur.Spec.RunPolicy.Suspend).To(Equal(ptr.To(true)))
		g.Expect(cur.Spec.RunPolicy.SchedulingPolicy == nil || cur.Spec.RunPolicy.SchedulingPolicy.MinAvailable == nil).To(BeTrue())
		for _, rt := range []kftraining.ReplicaType{kftraining.PyTorchJobReplicaTypeMaster, kftraining.PyTorchJobReplicaTypeWorker} {
			g.Expect(cur.Spec.PyTorchReplicaSpecs[rt].Template.Labels).NotTo(HaveKey(gang.KAIQueueLabel), "%s", rt)
		}
	}).Should(Succeed())
	evictedAndRestored(t, started, env.WorkloadOfJob(g, started))
}
