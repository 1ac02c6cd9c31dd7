package gang

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// KAIQueueLabel names a job's or pod's KAI queue.
const KAIQueueLabel = "kai.scheduler/queue"

// kai is NVIDIA's KAI Scheduler. Its podgrouper makes the pod group of
// every pod with KAI's schedulerName from the pod's top owner (and
// overwrites any group a pod names), so Muster creates none: it gives the
// pods KAI's schedulerName and queue label, and a kind whose group minimum
// comes from a job field (PyTorchJob minAvailable) gets the admitted count
// there. KAI groups a batch/v1 Job's pods one by one: no gang for Jobs.
type kai struct{}

func (kai) objects(*Group) []client.Object { return nil }

func (kai) marks(g *Group, _ string) *jobframework.GangInfo {
	return &jobframework.GangInfo{
		Labels: map[string]string{
			musterv1beta1.GangProviderLabel: string(musterv1beta1.GangKAI),
			KAIQueueLabel:                   g.Queue,
		},
		Annotations: map[string]string{musterv1beta1.SchedulerNameAnnotation: g.SchedulerName},
	}
}

func (kai) names(*musterv1beta1.Workload) []client.Object { return nil }
