// Package core holds the controllers that feed Muster's scheduling core
// (internal/core) with ClusterQueues, LocalQueues, ResourceFlavors and
// Workloads, the scheduler loop that applies its decisions, and the status
// writers of the queues.
package core

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
)

// InUseFinalizer keeps a ClusterQueue or ResourceFlavor that admitted
// workloads still use from vanishing under them: it is removed once the
// last of them finishes or is evicted.
const InUseFinalizer = "muster.dev/resource-in-use"

// statusCoalesceDelay batches queue status writes: however many workloads
// change, a queue's status is written at most once per delay.
const statusCoalesceDelay = time.Second

// State is the scheduling core shared by the controllers and the scheduler,
// with the functions that apply one object to it. Controllers and the
// scheduler's start-up rebuild call the same functions, so the core ends up
// the same whatever path an object took.
type State struct {
	Cache  *core.Cache
	Queues *core.Queues

	// clusterQueueEvents asks the ClusterQueue controller to refresh a
	// queue's activity and status (e.g. its flavor appeared).
	clusterQueueEvents chan event.GenericEvent
}

// NewState returns an empty state.
func NewState() *State {
	return &State{
		Cache:              core.NewCache(),
		Queues:             core.NewQueues(),
		clusterQueueEvents: make(chan event.GenericEvent, 1024),
	}
}

func (s *State) applyFlavor(rf *musterv1beta1.ResourceFlavor) []string {
	s.Cache.UpsertFlavor(toFlavor(rf))
	return s.Cache.QueuesUsingFlavor(rf.Name)
}

func (s *State) applyCohort(co *musterv1beta1.Cohort) {
	s.Cache.UpsertCohort(toCohort(co))
}

func (s *State) applyClusterQueue(cq *musterv1beta1.ClusterQueue) {
	c := toClusterQueue(cq)
	s.Cache.UpsertClusterQueue(c)
	s.Queues.UpsertClusterQueue(c.Name, c.Strategy)
}

func (s *State) applyLocalQueue(lq *musterv1beta1.LocalQueue) {
	s.Cache.SetLocalQueueStop(lq.Namespace+"/"+lq.Name, toStop(lq.Spec.StopPolicy))
	s.Queues.UpsertLocalQueue(lq.Namespace, lq.Name, string(lq.Spec.ClusterQueue))
}

// applyWorkload puts a workload where its status says it belongs: holding
// quota in the cache, pending in the queues, or nowhere once finished. A
// workload requeued with a backoff is kept out of the queues until its
// requeue time, which is returned (zero otherwise).
func (s *State) applyWorkload(wl *musterv1beta1.Workload, namespaceLabels map[string]string, now time.Time) time.Time {
	key := wl.Namespace + "/" + wl.Name
	switch {
	case isFinished(wl) || !wl.DeletionTimestamp.IsZero():
		s.forgetWorkload(key)
	case wl.Status.Admission != nil:
		if s.Cache.AddOrUpdateWorkload(toWorkload(wl, namespaceLabels)) {
			s.Queues.Unpark() // admission may have waited for these pods
		}
		s.Queues.Delete(key)
	case !isActive(wl):
		s.Queues.Delete(key)
		s.release(s.Cache.ReleaseConfirmed(key))
	case requeueAt(wl).After(now):
		s.Queues.Delete(key)
		s.release(s.Cache.ReleaseConfirmed(key))
		return requeueAt(wl)
	default:
		s.release(s.Cache.ReleaseConfirmed(key))
		// A workload the scheduler just assumed is not queued again: the
		// API view predates the admission being written.
		if !s.Cache.HoldsQuota(key) {
			s.Queues.AddOrUpdate(toWorkload(wl, namespaceLabels))
		}
	}
	return time.Time{}
}

// forgetWorkload drops a deleted or finished workload and frees its quota.
func (s *State) forgetWorkload(key string) {
	s.Queues.Delete(key)
	s.release(s.Cache.DeleteWorkload(key))
}

// release gives the workloads that wait for quota freed in a ClusterQueue
// another chance: those of every queue of its cohort tree, which may borrow
// it or were waiting for preemption victims there.
func (s *State) release(clusterQueue string) {
	if clusterQueue != "" {
		s.Queues.Unpark(s.Cache.CohortQueues(clusterQueue)...)
	}
}

// refreshClusterQueues asks the ClusterQueue controller to refresh queues.
func (s *State) refreshClusterQueues(names ...string) {
	for _, name := range names {
		s.clusterQueueEvents <- event.GenericEvent{Object: &musterv1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}}}
	}
}

func keyOf(nn types.NamespacedName) string { return nn.Namespace + "/" + nn.Name }

// requeueAt is when a workload evicted with a backoff may be queued again.
func requeueAt(wl *musterv1beta1.Workload) time.Time {
	if rs := wl.Status.RequeueState; rs != nil && rs.RequeueAt != nil {
		return rs.RequeueAt.Time
	}
	return time.Time{}
}
