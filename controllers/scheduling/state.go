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
	"github.com/musterhq/muster/internal/core/scheduler"
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
	// Tracker holds the cache and queues and the policy of who gets
	// another chance when a workload, a queue or quota changes.
	*scheduler.Tracker
	// RequeueByCreation orders workloads requeued after a PodsReady timeout
	// by their creation (requeuingStrategy.timestamp: Creation).
	RequeueByCreation bool
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
	// defaultGang is the gang scheduler of ClusterQueues that name none
	// (gangScheduling.provider).
	defaultGang musterv1beta1.GangSchedulerProvider
	// ReasonOf is the scheduler's latest pending reason of a workload (set
	// with the scheduler, before the manager starts).
	ReasonOf func(key string) (core.Pending, bool)
	// recent are the scheduler's latest writes, for the dashboard.
	recent recentLog
	// leader is whether this replica leads (replicas.go).
	leader *leadership
	// statusReason reads a pending reason from a workload's status, for
	// the workloads the scheduler here has not decided (a follower's).
	statusReason func(key string) string
}

// NewState returns an empty state.
func NewState() *State {
	return &State{
		Tracker:            scheduler.NewTracker(scheduler.Config{}),
		synced:             make(chan struct{}),
		localQueues:        map[string]localQueueState{},
		clusterQueueEvents: make(chan event.GenericEvent, 1024),
		leader:             newLeadership(),
	}
}

// ApplyFlavor applies a ResourceFlavor and returns the ClusterQueues using
// it when it is new or changed, none otherwise. Its controller runs for
// every admission that finishes (for its in-use finalizer): unparking and
// refreshing every queue on the flavor each time would re-decide every
// backlog and snapshot every cohort tree on the flavor, once per finished
// workload.
func (s *State) ApplyFlavor(rf *musterv1beta1.ResourceFlavor) []string {
	if !s.Cache.UpsertFlavor(toFlavor(rf)) {
		return nil
	}
	return s.Cache.QueuesUsingFlavor(rf.Name)
}

func (s *State) applyCohort(co *musterv1beta1.Cohort) {
	s.Cache.UpsertCohort(toCohort(co))
}

// ApplyClusterQueue applies a ClusterQueue; its parked workloads and those
// of its cohort tree get another chance, since a spec change (joining a
// cohort, lending more) may let them fit.
func (s *State) ApplyClusterQueue(cq *musterv1beta1.ClusterQueue) {
	q := toClusterQueue(cq)
	if q.Gang == "" {
		q.Gang = string(s.defaultGang)
	}
	if q.Gang == string(musterv1beta1.GangNone) {
		q.Gang = ""
	}
	s.UpsertClusterQueue(q)
}

// GangsInUse are the gang schedulers some ClusterQueue hands jobs to.
func (s *State) GangsInUse() []string { return s.Cache.GangsInUse() }

// SetGangServed records whether a gang scheduler's API is served; the
// queues that hand their jobs to it are refreshed, and get their pending
// workloads tried again once it is.
func (s *State) SetGangServed(provider string, served bool, detail string) {
	changed := s.Cache.SetGangServed(provider, served, detail)
	if len(changed) == 0 {
		return
	}
	s.refreshClusterQueues(changed...)
	if served {
		s.Queues.Unpark(changed...)
	}
}

// ApplyLocalQueue applies a LocalQueue; a resumed one's workloads are
// tried again.
func (s *State) ApplyLocalQueue(lq *musterv1beta1.LocalQueue) {
	key := lq.Namespace + "/" + lq.Name
	now := localQueueState{clusterQueue: string(lq.Spec.ClusterQueue), stop: toStop(lq.Spec.StopPolicy), weight: weightOf(lq.Spec.FairSharing)}
	s.mu.Lock()
	before, seen := s.localQueues[key]
	s.localQueues[key] = now
	s.mu.Unlock()
	if seen && before == now {
		return
	}
	s.Cache.SetLocalQueueStop(key, now.stop)
	s.Cache.SetLocalQueueWeight(key, now.weight)
	s.Queues.UpsertLocalQueue(lq.Namespace, lq.Name, now.clusterQueue)
	s.Queues.Unpark(now.clusterQueue)
}

// forgetLocalQueue drops a deleted LocalQueue.
func (s *State) forgetLocalQueue(namespace, name string) {
	s.mu.Lock()
	delete(s.localQueues, namespace+"/"+name)
	s.mu.Unlock()
	s.Cache.SetLocalQueueStop(namespace+"/"+name, core.Running)
	s.Cache.DeleteLocalQueue(namespace + "/" + name)
	s.Queues.DeleteLocalQueue(namespace, name)
}

type localQueueState struct {
	clusterQueue string
	stop         core.StopPolicy
	weight       int64
}

// markSynced records that the core holds everything the API had.
func (s *State) markSynced() { s.syncedOnce.Do(func() { close(s.synced) }) }

// WaitSynced blocks until the core was rebuilt, or ctx ends.
func (s *State) WaitSynced(ctx context.Context) error {
	select {
	case <-s.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ApplyWorkload puts a workload where its status says it belongs: holding
// quota in the cache, pending in the queues, or nowhere once finished. A
// workload requeued with a backoff is kept out of the queues until its
// requeue time, which is returned (zero otherwise).
func (s *State) ApplyWorkload(wl *musterv1beta1.Workload, namespaceLabels map[string]string, now time.Time) time.Time {
	phase := phaseOf(wl, now)
	w := &core.Workload{Key: wl.Namespace + "/" + wl.Name}
	switch phase {
	case scheduler.PhaseHolding:
		w = toWorkloadWith(wl, namespaceLabels, s.Cache.FlavorTopology)
	case scheduler.PhasePending:
		w = s.PendingWorkload(wl, namespaceLabels)
	}
	s.Apply(phase, w)
	if phase == scheduler.PhaseBackoff {
		return workload.RequeueAt(wl)
	}
	return time.Time{}
}

// phaseOf reads where a workload is in its life from its status. A
// Workload being deleted whose job has not stopped yet still holds quota:
// its pods use it until its finalizer goes.
func phaseOf(wl *musterv1beta1.Workload, now time.Time) scheduler.Phase {
	switch {
	case workload.Gone(wl):
		return scheduler.PhaseGone
	case workload.HasQuotaReservation(wl):
		return scheduler.PhaseHolding
	case !workload.IsActive(wl):
		return scheduler.PhaseInactive
	case workload.RequeueAt(wl).After(now):
		return scheduler.PhaseBackoff
	}
	return scheduler.PhasePending
}

// PendingWorkload is the core's view of a pending workload, ordered in its
// queue as the requeuing strategy says.
func (s *State) PendingWorkload(wl *musterv1beta1.Workload, namespaceLabels map[string]string) *core.Workload {
	w := toWorkloadWith(wl, namespaceLabels, s.Cache.FlavorTopology)
	if s.RequeueByCreation {
		if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadRequeued); c != nil &&
			c.Reason == musterv1beta1.ReasonPodsReadyTimeout {
			w.Created = joinedAt(wl)
		}
	}
	return w
}

// refreshClusterQueues asks the ClusterQueue controller to refresh queues.
func (s *State) refreshClusterQueues(names ...string) {
	for _, name := range names {
		s.clusterQueueEvents <- event.GenericEvent{Object: &musterv1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}}}
	}
}

func keyOf(nn types.NamespacedName) string { return nn.Namespace + "/" + nn.Name }
