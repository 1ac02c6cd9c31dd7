package multicluster

import (
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/musterhq/muster/controllers/jobframework"
)

// Options configure the multi-cluster dispatch.
type Options struct {
	// Namespace is Muster's: the kubeconfig Secrets are read there.
	Namespace string
	// Origin labels what this manager creates in the workers.
	Origin string
	// GCInterval is how often the workers are swept; 0 never.
	GCInterval time.Duration
	// WorkerLostTimeout is how long a worker may not answer before its
	// workloads are dispatched again.
	WorkerLostTimeout time.Duration
	// Incremental nominates a few workers at a time.
	Incremental bool
	// Kinds are the job kinds that can be dispatched.
	Kinds []jobframework.MultiClusterKind
	// ProbeEvery is how often each worker is asked whether it answers.
	ProbeEvery time.Duration
	// QPS and Burst limit the client of each worker.
	QPS   float32
	Burst int
	Clock clock.PassiveClock
}

// DefaultProbeEvery is how often a worker is probed by default.
const DefaultProbeEvery = 5 * time.Second

// Setup registers the multi-cluster controllers: the connections to the
// MultiClusters, the checks' Active condition, the dispatcher and its
// sweep.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.ProbeEvery == 0 {
		o.ProbeEvery = DefaultProbeEvery
	}
	pool := NewPool(mgr.GetScheme(), o.Origin, o.Clock, o.ProbeEvery, o.QPS, o.Burst)
	if err := mgr.Add(pool); err != nil {
		return err
	}
	clusters := &ClusterReconciler{Client: mgr.GetClient(), Secrets: mgr.GetAPIReader(), Namespace: o.Namespace, Pool: pool}
	if err := clusters.SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&CheckReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	d := &Dispatcher{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("muster-multicluster"), Clock: o.Clock, Pool: pool,
		Kinds: o.Kinds, WorkerLostTimeout: o.WorkerLostTimeout, Incremental: o.Incremental,
	}
	if err := d.SetupWithManager(mgr); err != nil {
		return err
	}
	return mgr.Add(&collector{d: d, every: o.GCInterval})
}
