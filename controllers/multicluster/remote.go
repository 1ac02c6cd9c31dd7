package multicluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// errNotServed: the worker answers but does not serve Muster's Workloads.
var errNotServed = errors.New("the API server does not serve muster.dev/v1beta1 workloads: is Muster installed there?")

// remote is the manager's connection to one worker cluster: a client for
// writes and single reads, an informer on the Workloads this manager
// created there (the origin label selects them) whose events wake the
// dispatcher, and a probe that says whether the worker answers.
type remote struct {
	name   string
	config *rest.Config
	client client.Client
	cache  cache.Cache
	cancel context.CancelFunc
	clock  clock.PassiveClock

	mu sync.Mutex
	// err is the last probe's failure, nil while the worker answers.
	err error
	// probed is set once the first probe answered.
	probed bool
	synced bool

	// ctx and onWorkload, set by start, serve the job informers added
	// later; jobKinds are the kinds watched already.
	ctx        context.Context
	onWorkload func(namespace, name string)
	jobKinds   map[schema.GroupVersionKind]bool
}

// newRemote connects to a worker; nothing is started until start.
func newRemote(name string, cfg *rest.Config, scheme *runtime.Scheme, origin string, clk clock.PassiveClock) (*remote, error) {
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	sel := labels.SelectorFromSet(labels.Set{musterv1beta1.MultiClusterOriginLabel: origin})
	// Watches last: the per-request timeout of cfg would cut each one.
	watchCfg := rest.CopyConfig(cfg)
	watchCfg.Timeout = 0
	ca, err := cache.New(watchCfg, cache.Options{
		Scheme:               scheme,
		DefaultLabelSelector: sel,
		DefaultTransform:     cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	return &remote{name: name, config: cfg, client: c, cache: ca, clock: clk}, nil
}

// start runs the worker's informer and probe until stop, calling changed
// whenever the worker's state changes (answers, stops answering, its
// cache synced) and onWorkload for every event of a copy there.
func (r *remote) start(ctx context.Context, probeEvery time.Duration, changed func(), onWorkload func(namespace, name string)) error {
	ctx, r.cancel = context.WithCancel(ctx)
	r.ctx, r.onWorkload = ctx, onWorkload
	inf, err := r.cache.GetInformer(ctx, &musterv1beta1.Workload{}, cache.BlockUntilSynced(false))
	if err != nil {
		r.cancel()
		return err
	}
	if _, err := inf.AddEventHandler(workloadEvents(onWorkload)); err != nil {
		r.cancel()
		return err
	}
	go func() {
		if err := r.cache.Start(ctx); err != nil {
			log.FromContext(ctx).Error(err, "Worker cluster's cache stopped", "cluster", r.name)
		}
	}()
	go func() {
		if r.cache.WaitForCacheSync(ctx) {
			r.mu.Lock()
			r.synced = true
			r.mu.Unlock()
			changed()
		}
	}()
	go r.probeLoop(ctx, probeEvery, changed)
	return nil
}

func (r *remote) stop() {
	if r.cancel != nil {
		r.cancel()
	}
}

// watchJobs has the jobs of a kind this manager created in the worker
// wake their workloads too (a job's status changes without its workload's),
// once per kind. A worker that does not serve the kind is left unwatched:
// its workloads' events still arrive.
func (r *remote) watchJobs(gvk schema.GroupVersionKind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jobKinds == nil {
		r.jobKinds = map[schema.GroupVersionKind]bool{}
	}
	if r.jobKinds[gvk] || r.ctx == nil {
		return
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	inf, err := r.cache.GetInformer(r.ctx, obj, cache.BlockUntilSynced(false))
	if err == nil {
		_, err = inf.AddEventHandler(eventsOf(r.onWorkload, jobframework.PrebuiltWorkloadName))
	}
	if err != nil {
		log.FromContext(r.ctx).Error(err, "Cannot watch the jobs of a worker cluster", "cluster", r.name, "kind", gvk.Kind)
		return
	}
	r.jobKinds[gvk] = true
}

func workloadEvents(on func(namespace, name string)) toolscache.ResourceEventHandler {
	return eventsOf(on, client.Object.GetName)
}

// eventsOf calls on with the namespace and the workload name of every
// object of an informer's events.
func eventsOf(on func(namespace, name string), workloadName func(client.Object) string) toolscache.ResourceEventHandler {
	notify := func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if o, ok := obj.(client.Object); ok {
			if name := workloadName(o); name != "" {
				on(o.GetNamespace(), name)
			}
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, n any) { notify(n) },
		DeleteFunc: notify,
	}
}

// probeLoop asks the worker's discovery, every probeEvery, whether it
// serves Workloads.
func (r *remote) probeLoop(ctx context.Context, every time.Duration, changed func()) {
	dc, err := discovery.NewDiscoveryClientForConfig(r.config)
	if err != nil {
		r.record(err)
		changed()
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if r.record(probe(dc)) {
			changed()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func probe(dc discovery.DiscoveryInterface) error {
	res, err := dc.ServerResourcesForGroupVersion(musterv1beta1.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return errNotServed
	}
	if err != nil {
		return err
	}
	for _, r := range res.APIResources {
		if r.Name == "workloads" {
			return nil
		}
	}
	return errNotServed
}

// record keeps a probe's answer, reporting whether the worker's state
// changed.
func (r *remote) record(err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	was, wasProbed := r.err, r.probed
	r.err, r.probed = err, true
	return !wasProbed || (was == nil) != (err == nil) || (was != nil && err != nil && was.Error() != err.Error())
}

// health is the worker's last known state.
type health struct {
	// usable: the worker answers and its copies are known.
	usable bool
	// reason and message say why not, as the MultiCluster's Active
	// condition does.
	reason, message string
}

func (r *remote) health() health {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !r.probed:
		return health{reason: ReasonConnecting, message: "Connecting"}
	case errors.Is(r.err, errNotServed):
		return health{reason: musterv1beta1.ReasonMissingAPIs, message: r.err.Error()}
	case r.err != nil:
		return health{reason: musterv1beta1.ReasonClientConnectionFailed, message: r.err.Error()}
	case !r.synced:
		return health{reason: ReasonConnecting, message: "Listing the workloads there"}
	}
	return health{usable: true, reason: musterv1beta1.ReasonMultiClusterActive, message: "Connected"}
}

// workload reads a copy from the worker's informer; nil if there is none.
func (r *remote) workload(ctx context.Context, namespace, name string) (*musterv1beta1.Workload, error) {
	var wl musterv1beta1.Workload
	err := r.cache.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &wl)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", r.name, err)
	}
	return &wl, nil
}
