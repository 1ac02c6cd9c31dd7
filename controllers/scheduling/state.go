// Package scheduling holds the controllers that feed Muster's scheduling core
// (internal/core) with ClusterQueues, LocalQueues, ResourceFlavors and
// Workloads, the scheduler loop that applies its decisions, and the status
// writers of the queues.
package scheduling

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/workload"
)

// InUseFinalizer keeps a ClusterQueue or ResourceFlavor that admitted
// workloads still use from vanishing under them: it is removed once the
// last of them finishes or is evicted.
const InUseFinalizer = musterv1beta1.ResourceInUseFinalizer

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

	// blockAdmission is waitForPodsReady.blockAdmission: admission anywhere
	// waits for any admitted workload, so any release may unblock anyone.
	blockAdmission bool
	// requeueByCreation orders workloads requeued after a PodsReady timeout
	// by their creation (requeuingStrategy.timestamp: Creation).
	requeueByCreation bool
	// synced is closed once the scheduler has rebuilt the core from the
	// API; controllers apply nothing before, so a rebuild from an older
	// list never overwrites what they applied.
	synced     chan struct{}
	syncedOnce sync.Once

	mu sync.Mutex
	// localQueues remembers what each LocalQueue was applied with, so that
	// only a change (resumed, moved) gives its workloads another chance.
	localQueues map[string]localQueueState

	// clusterQueueEvents asks the ClusterQueue controller to refresh a
	// queue's activity and status (e.g. its flavor appeared).
	clusterQueueEvents chan event.GenericEvent

	// onForget, when set, hears of every workload dropped from the state.
	onForget func(key string)
}

// NewState returns an empty state.
func NewState() *State {
	return &State{
		Cache:              core.NewCache(),
		Queues:             core.NewQueues(),
		synced:             make(chan struct{}),
		localQueues:        map[string]localQueueState{},
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

// applyClusterQueue applies a ClusterQueue; its parked workloads and those
// of its cohort tree get another chance, since a spec change (joining a
// cohort, lending more) may let them fit.
func (s *State) applyClusterQueue(cq *musterv1beta1.ClusterQueue) {
	c := toClusterQueue(cq)
	before := s.Cache.CohortQueues(c.Name)
	s.Cache.UpsertClusterQueue(c)
	s.Queues.UpsertClusterQueue(c.Name, c.Strategy)
	s.Queues.Unpark(append(before, s.Cache.CohortQueues(c.Name)...)...)
}

// applyLocalQueue applies a LocalQueue; a resumed one's workloads are
// tried again.
func (s *State) applyLocalQueue(lq *musterv1beta1.LocalQueue) {
	key := lq.Namespace + "/" + lq.Name
	now := localQueueState{clusterQueue: string(lq.Spec.ClusterQueue), stop: toStop(lq.Spec.StopPolicy)}
	s.mu.Lock()
	before, seen := s.localQueues[key]
	s.localQueues[key] = now
	s.mu.Unlock()
	if seen && before == now {
		return
	}
	s.Cache.SetLocalQueueStop(key, now.stop)
	s.Queues.UpsertLocalQueue(lq.Namespace, lq.Name, now.clusterQueue)
	s.Queues.Unpark(now.clusterQueue)
}

// forgetLocalQueue drops a deleted LocalQueue.
func (s *State) forgetLocalQueue(namespace, name string) {
	s.mu.Lock()
	delete(s.localQueues, namespace+"/"+name)
	s.mu.Unlock()
	s.Cache.SetLocalQueueStop(namespace+"/"+name, core.Running)
	s.Queues.DeleteLocalQueue(namespace, name)
}

type localQueueState struct {
	clusterQueue string
	stop         core.StopPolicy
}

// markSynced records that the core holds everything the API had.
func (s *State) markSynced() { s.syncedOnce.Do(func() { close(s.synced) }) }

// isSynced reports whether the core was rebuilt from the API.
func (s *State) isSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// waitSynced blocks until the core was rebuilt, or ctx ends.
func (s *State) waitSynced(ctx context.Context) error {
	select {
	case <-s.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// applyWorkload puts a workload where its status says it belongs: holding
// quota in the cache, pending in the queues, or nowhere once finished. A
// workload requeued with a backoff is kept out of the queues until its
// requeue time, which is returned (zero otherwise).
func (s *State) applyWorkload(wl *musterv1beta1.Workload, namespaceLabels map[string]string, now time.Time) time.Time {
	key := wl.Namespace + "/" + wl.Name
	switch {
	case workload.Gone(wl):
		s.forgetWorkload(key)
	case workload.HasQuotaReservation(wl):
		// Also a Workload being deleted whose job has not stopped yet: its
		// pods still use the quota until its finalizer goes.
		if s.Cache.AddOrUpdateWorkload(toWorkload(wl, namespaceLabels)) {
			s.Queues.Unpark() // admission may have waited for these pods
		}
		s.Queues.Delete(key)
	case !workload.IsActive(wl):
		s.Queues.Forget(key)
		s.release(s.Cache.ReleaseConfirmed(key))
	case workload.RequeueAt(wl).After(now):
		s.Queues.Forget(key)
		s.release(s.Cache.ReleaseConfirmed(key))
		return workload.RequeueAt(wl)
	default:
		s.release(s.Cache.ReleaseConfirmed(key))
		// A workload the scheduler just assumed is not queued again: the
		// API view predates the admission being written.
		if !s.Cache.HoldsQuota(key) {
			s.Queues.AddOrUpdate(s.pendingWorkload(wl, namespaceLabels))
		}
	}
	return time.Time{}
}

// pendingWorkload is the core's view of a pending workload, ordered in its
// queue as the requeuing strategy says.
func (s *State) pendingWorkload(wl *musterv1beta1.Workload, namespaceLabels map[string]string) *core.Workload {
	w := toWorkload(wl, namespaceLabels)
	if s.requeueByCreation {
		if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadRequeued); c != nil &&
			c.Reason == musterv1beta1.ReasonPodsReadyTimeout {
			w.Created = joinedAt(wl)
		}
	}
	return w
}

// forgetWorkload drops a deleted or finished workload and frees its quota.
func (s *State) forgetWorkload(key string) {
	s.Queues.Forget(key)
	s.release(s.Cache.DeleteWorkload(key))
	if s.onForget != nil {
		s.onForget(key)
	}
}

// release gives the workloads that wait for quota freed in a ClusterQueue
// another chance: those of every queue of its cohort tree, which may borrow
// it or were waiting for preemption victims there.
func (s *State) release(clusterQueue string) {
	switch {
	case clusterQueue == "":
	case s.blockAdmission:
		s.Queues.Unpark() // admission everywhere may have waited for it
	default:
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
