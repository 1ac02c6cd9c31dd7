package admission

import (
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/musterhq/muster/controllers/scheduling"
)

// SetupAdmission adds the admission loop to the manager: on the leader, it
// runs the core's cycles over the state the scheduling controllers keep and
// writes their decisions. latency, when set, follows the manager's writes
// (its Wrap on the rest.Config the manager was built from) and sizes the
// admission writers by it.
func Setup(mgr ctrl.Manager, state *scheduling.State, clk clock.WithTicker, latency *WriteLatency) error {
	s := newScheduler(mgr.GetClient(), mgr.GetCache(), state, mgr.GetEventRecorder("muster-scheduler"), clk, mgr.GetConfig().QPS)
	s.writes.latency = latency
	return mgr.Add(s)
}
