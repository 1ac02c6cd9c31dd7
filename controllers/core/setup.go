package core

import (
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Setup registers the core controllers and the scheduler on a manager and
// returns the state they share.
func Setup(mgr ctrl.Manager, fairSharing bool) (*State, error) {
	state := NewState()
	state.Cache.SetFairSharing(fairSharing)
	c := mgr.GetClient()
	reconcilers := []interface{ SetupWithManager(ctrl.Manager) error }{
		&ResourceFlavorReconciler{client: c, state: state},
		&CohortReconciler{client: c, state: state, fairSharing: fairSharing},
		&ClusterQueueReconciler{client: c, state: state, fairSharing: fairSharing},
		&LocalQueueReconciler{client: c, state: state},
		&WorkloadReconciler{client: c, state: state},
	}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	err := mgr.Add(&Scheduler{
		client:   c,
		reader:   mgr.GetCache(),
		state:    state,
		recorder: mgr.GetEventRecorder("muster-scheduler"),
		clock:    clock.RealClock{},
	})
	return state, err
}
