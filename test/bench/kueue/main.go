// Command kueue-bench runs Kueue's scheduling half (core controllers, cache,
// queue manager and scheduler of sigs.k8s.io/kueue v0.19.2) and nothing
// else, so the benchmark harness can compare it with Muster on the same API
// server. Unlike Kueue's own minimalkueue it takes the client QPS and burst
// as flags (default: v0.19.2's defaults, QPS 300 and burst 500), for the
// harness's modes, and runs the worker counts of Kueue's shipped
// configuration rather than minimalkueue's.
//
// With -enable-tas it also runs Kueue's topology-aware scheduling
// controllers, as Kueue's manager does when its TopologyAwareScheduling gate
// is on (the default since v0.14) and minimalkueue does with -enableTAS: the
// scheduler's TAS code is always compiled in, but without those controllers
// its cache never learns the Topologies, the flavors' nodes or their usage.
//
// It lives in its own Go module because Kueue pins older k8s.io and
// controller-runtime releases than Muster.
package main

import (
	"context"
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/admissionchecks/multikueue"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	// The batch/v1 Job integration registers itself.
	_ "sigs.k8s.io/kueue/pkg/controller/jobs/job"
	"sigs.k8s.io/kueue/pkg/controller/tas"
	tasindexer "sigs.k8s.io/kueue/pkg/controller/tas/indexer"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/scheduler"
	"sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/util/kubeversion"
)

func main() {
	qps := flag.Float64("qps", float64(configapi.DefaultClientConnectionQPS), "Client QPS (Kueue's default: 300).")
	burst := flag.Int("burst", int(configapi.DefaultClientConnectionBurst), "Client burst (Kueue's default: 500).")
	pprofAddr := flag.String("pprof-bind-address", "", "Serve pprof profiles on this address (off when empty).")
	enableTAS := flag.Bool("enable-tas", false, "Run Kueue's topology-aware scheduling controllers and indexes.")
	multiKueue := flag.Bool("multikueue", false, "Run Kueue's batch/v1 Job integration and its MultiKueue controllers (Secrets in the default namespace), as a MultiKueue manager.")
	certDir := flag.String("cert-dir", "", "The webhook server's certificate directory (the Job integration registers webhooks; nothing calls them).")
	gates := flag.String("feature-gates", "", "Kueue feature gates, key=value pairs as Kueue's own --feature-gates (e.g. TASBalancedPlacement=true).")
	logOpts := zap.Options{}
	logOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&logOpts)))
	if err := utilfeature.DefaultMutableFeatureGate.Set(*gates); err != nil {
		ctrl.Log.Error(err, "Invalid feature gates")
		os.Exit(2)
	}
	ctrl.Log.Info("TAS feature gates", "TopologyAwareScheduling", features.Enabled(features.TopologyAwareScheduling),
		"TASBalancedPlacement", features.Enabled(features.TASBalancedPlacement), "TASProfileMixed", features.Enabled(features.TASProfileMixed))
	if err := run(ctrl.SetupSignalHandler(), float32(*qps), *burst, *pprofAddr, *enableTAS, *multiKueue, *certDir); err != nil {
		ctrl.Log.Error(err, "Kueue stopped with an error")
		os.Exit(1)
	}
}

func run(ctx context.Context, qps float32, burst int, pprofAddr string, enableTAS, multiKueue bool, certDir string) error {
	restCfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	restCfg.QPS, restCfg.Burst = qps, burst
	ctrl.Log.Info("Starting Kueue's scheduler", "qps", qps, "burst", burst)

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		return err
	}
	// The worker counts of Kueue's shipped configuration
	// (config/components/manager/controller_manager_config.yaml: Workload,
	// LocalQueue and ClusterQueue 10/5/5 in v0.19.2, 5/1/1 in v0.17.0;
	// minimalkueue still runs 5/1/1).
	concurrency := map[string]int{
		kueue.SchemeGroupVersion.WithKind("Workload").GroupKind().String():       10,
		kueue.SchemeGroupVersion.WithKind("LocalQueue").GroupKind().String():     5,
		kueue.SchemeGroupVersion.WithKind("ClusterQueue").GroupKind().String():   5,
		kueue.SchemeGroupVersion.WithKind("Cohort").GroupKind().String():         1,
		kueue.SchemeGroupVersion.WithKind("ResourceFlavor").GroupKind().String(): 1,
	}
	if enableTAS {
		concurrency[kueue.SchemeGroupVersion.WithKind("Topology").GroupKind().String()] = 1
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:           scheme,
		Metrics:          metricsserver.Options{BindAddress: "0"},
		PprofBindAddress: pprofAddr,
		Controller:       crconfig.Controller{SkipNameValidation: new(true), GroupKindConcurrency: concurrency},
		WebhookServer:    webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: 0, CertDir: certDir}),
	})
	if err != nil {
		return err
	}
	if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if enableTAS {
		if err := tasindexer.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
	}
	if multiKueue {
		if err := multikueue.SetupIndexer(ctx, mgr.GetFieldIndexer(), multiKueueNamespace); err != nil {
			return err
		}
		if err := jobframework.SetupIndexes(ctx, mgr.GetFieldIndexer(), jobframework.WithEnabledFrameworks(multiKueueFrameworks)); err != nil {
			return err
		}
	}

	cache := schdcache.New(mgr.GetClient())
	requeuer := qcache.NewRequeuer()
	if err := mgr.Add(requeuer); err != nil {
		return err
	}
	expect := expectations.New()
	queues := qcache.NewManager(mgr.GetClient(), cache, requeuer, qcache.WithPreemptionExpectations(expect))
	go queues.CleanUpOnContext(ctx)
	go cache.CleanUpOnContext(ctx)

	// An empty Configuration is Kueue's scheduler with fair sharing off, as
	// in Kueue's own performance test.
	if name, err := core.SetupControllers(mgr, queues, cache, &configapi.Configuration{},
		core.SetupControllersOpts{PreemptionExpectations: expect}); err != nil {
		ctrl.Log.Error(err, "Unable to set up a core controller", "controller", name)
		return err
	}
	if enableTAS {
		if err := setupTAS(mgr, queues, cache); err != nil {
			return err
		}
	}
	if multiKueue {
		if err := setupMultiKueue(ctx, mgr, restCfg, queues, cache); err != nil {
			return err
		}
	}
	sched := scheduler.New(queues, cache, mgr.GetClient(), mgr.GetEventRecorder(constants.AdmissionName),
		scheduler.WithPreemptionExpectations(expect))
	if err := mgr.Add(sched); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// setupTAS wires what Kueue's manager wires for topology-aware scheduling,
// through the one entry point Kueue exports for it (its reconcilers are
// unexported): the Topology and ResourceFlavor reconcilers, which build the
// cache's per-flavor topology; the Node reconciler, which keeps the nodes'
// allocatable and readiness in it; the non-TAS-pod usage reconciler and the
// topology ungater, which watch Pods (none exist in the benchmark, so they
// stay idle). As in minimalkueue, with an empty Configuration.
func setupTAS(mgr ctrl.Manager, queues *qcache.Manager, cache *schdcache.Cache) error {
	if name, err := tas.SetupControllers(mgr, queues, cache, &configapi.Configuration{}, nil); err != nil {
		ctrl.Log.Error(err, "Unable to set up a TAS controller", "controller", name)
		return err
	}
	return nil
}

// The MultiKueue manager of the multi-cluster benchmark: Kueue's defaults
// (AllAtOnce, gcInterval 1m, workerLostTimeout 15m, origin multikueue) and
// batch/v1 Jobs only.
const multiKueueNamespace = "default"

var multiKueueFrameworks = []string{"batch/job"}

// setupMultiKueue wires what Kueue's main wires for a MultiKueue manager
// dispatching batch/v1 Jobs: the Job integration (its reconciler creates
// the Workloads from the Jobs, starts and stops them) and the MultiKueue
// cluster, admission check and workload controllers with the Job adapter.
func setupMultiKueue(ctx context.Context, mgr ctrl.Manager, restCfg *rest.Config, queues *qcache.Manager, cache *schdcache.Cache) error {
	adapters, err := jobframework.GetMultiKueueAdapters(sets.New(multiKueueFrameworks...))
	if err != nil {
		return err
	}
	if err := multikueue.SetupControllers(mgr, multiKueueNamespace, multikueue.WithAdapters(adapters),
		multikueue.WithGCInterval(configapi.DefaultMultiKueueGCInterval),
		multikueue.WithOrigin(configapi.DefaultMultiKueueOrigin),
		multikueue.WithWorkerLostTimeout(configapi.DefaultMultiKueueWorkerLostTimeout)); err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		return err
	}
	versions := kubeversion.NewServerVersionFetcher(dc)
	if err := versions.FetchServerVersion(); err != nil {
		return err
	}
	if err := mgr.Add(versions); err != nil {
		return err
	}
	return jobframework.SetupControllers(ctx, mgr, ctrl.Log.WithName("jobframework"),
		jobframework.WithEnabledFrameworks(multiKueueFrameworks),
		jobframework.WithManagerName(constants.KueueName),
		jobframework.WithKubeServerVersion(versions),
		jobframework.WithCache(cache),
		jobframework.WithQueues(queues))
}
