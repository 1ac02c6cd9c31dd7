package scheduling

import (
	"context"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core/quota"
	"github.com/musterhq/muster/internal/core/scheduler"
)

// Options are the component-config switches of the core controllers.
type Options struct {
	FairSharing bool
	// BlockAdmission admits nothing while an admitted workload's pods are
	// not all ready (waitForPodsReady.blockAdmission).
	BlockAdmission bool
	// RequeueByCreation gives a workload requeued after a PodsReady timeout
	// its original place in its queue (requeuingStrategy.timestamp:
	// Creation) instead of one behind those that waited while it ran.
	RequeueByCreation bool
	// PreemptionDelay is how long a workload that fits only by preempting
	// holds its room before it evicts anyone.
	PreemptionDelay time.Duration
	// NodeFailureGrace is how long a node must stay NotReady before the
	// placements on it are repaired.
	NodeFailureGrace time.Duration
	// BalancedPlacement places preferred topology requests balanced first
	// (topologyAwareScheduling.balancedPlacement).
	BalancedPlacement bool
	Clock             clock.WithTicker
	// DefaultGang is the gang scheduler of ClusterQueues that name none.
	DefaultGang musterv1beta1.GangSchedulerProvider
	// UsageDecay, when set, orders fair sharing by usage decayed over time,
	// sampled every UsageSampling (fairSharing.usage).
	UsageDecay    *quota.DecayConfig
	UsageSampling time.Duration
}

// Setup registers the controllers that keep the core in line with the API
// on a manager and returns the state they keep; the admission loop
// (package admission) runs over it.
func Setup(mgr ctrl.Manager, opts Options) (*State, error) {
	fairSharing := opts.FairSharing
	state := NewState()
	state.Config = scheduler.Config{FairSharing: fairSharing, BlockAdmission: opts.BlockAdmission,
		PreemptionDelay: opts.PreemptionDelay, NodeFailureGrace: opts.NodeFailureGrace, BalancedPlacement: opts.BalancedPlacement}
	state.RequeueByCreation = opts.RequeueByCreation
	state.defaultGang = opts.DefaultGang
	state.statusReason = reasonInStatus(mgr.GetCache())
	if opts.UsageDecay != nil {
		state.Cache.SetUsageDecay(*opts.UsageDecay, opts.UsageSampling)
		if err := mgr.Add(&usageSampler{state: state, clock: opts.Clock, interval: opts.UsageSampling}); err != nil {
			return nil, err
		}
	}
	c := leaderWrites(mgr.GetClient(), state)
	reconcilers := []interface{ SetupWithManager(ctrl.Manager) error }{
		&ResourceFlavorReconciler{client: c, state: state},
		&CohortReconciler{client: c, state: state, fairSharing: fairSharing},
		&ClusterQueueReconciler{client: c, state: state, fairSharing: fairSharing},
		&LocalQueueReconciler{client: c, state: state},
		&WorkloadReconciler{client: c, state: state, clock: opts.Clock},
		&PriorityClassReconciler{client: c, state: state},
		&TopologyReconciler{client: c, state: state},
		&AdmissionCheckReconciler{client: c, state: state},
	}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	feed := &capacityFeed{state: state}
	if err := mgr.Add(everyReplicaRunnable(func(ctx context.Context) error {
		return feed.register(ctx, mgr.GetCache())
	})); err != nil {
		return nil, err
	}
	if err := mgr.Add(everyReplicaRunnable(func(ctx context.Context) error {
		return rebuild(ctx, mgr.GetCache(), state, opts.Clock)
	})); err != nil {
		return nil, err
	}
	return state, nil
}

// everyReplicaRunnable runs fn on every replica, leader or not.
type everyReplicaRunnable func(ctx context.Context) error

func (r everyReplicaRunnable) Start(ctx context.Context) error { return r(ctx) }

// NeedLeaderElection is false: see replicas.go.
func (r everyReplicaRunnable) NeedLeaderElection() bool { return false }
