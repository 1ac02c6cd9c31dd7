package multicluster

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
)

// +kubebuilder:rbac:groups=muster.dev,resources=multiclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=multiclusters/status,verbs=get;update;patch

// The Active reasons of a MultiCluster that only Muster has.
const (
	// ReasonConnecting: the first probe has not answered yet.
	ReasonConnecting = "Connecting"
	// ReasonBadKubeConfig: the Secret is missing or holds no usable
	// kubeconfig (Kueue's reason).
	ReasonBadKubeConfig = "BadKubeConfig"
	// ReasonInsecureKubeConfig: the kubeconfig asks for what Muster
	// refuses to do (Kueue's reason).
	ReasonInsecureKubeConfig = "InsecureKubeConfig"
)

// secretRecheck is how often a MultiCluster's Secret is read again: it is
// read directly (Muster watches no Secrets), so a rotated credential is
// picked up within this.
const secretRecheck = time.Minute

// Pool holds the manager's connections to the worker clusters, one per
// MultiCluster, shared by the reconcilers.
type Pool struct {
	scheme     *runtime.Scheme
	origin     string
	clock      clock.PassiveClock
	probeEvery time.Duration
	// qps and burst limit the client of each worker (the manager's own
	// client limits: client-go's defaults would hold the dispatch to 5
	// requests a second per worker).
	qps   float32
	burst int

	mu sync.RWMutex
	// started is when this replica started leading; ctx is the pool's
	// (both set by Start).
	started time.Time
	ctx     context.Context
	remotes map[string]*remote
	hashes  map[string][sha256.Size]byte

	// clusterEvents wake the cluster reconciler and the dispatcher when a
	// worker's state changes; workloadEvents wake the dispatcher when a
	// copy changes in a worker.
	clusterEvents  chan event.GenericEvent
	workloadEvents chan event.GenericEvent
}

// NewPool returns an empty pool. probeEvery is how often each worker is
// asked whether it answers; qps and burst limit each worker's client.
func NewPool(scheme *runtime.Scheme, origin string, clk clock.PassiveClock, probeEvery time.Duration, qps float32, burst int) *Pool {
	return &Pool{
		scheme: scheme, origin: origin, clock: clk, probeEvery: probeEvery, qps: qps, burst: burst,
		remotes:        map[string]*remote{},
		hashes:         map[string][sha256.Size]byte{},
		clusterEvents:  make(chan event.GenericEvent, 64),
		workloadEvents: make(chan event.GenericEvent, 1024),
	}
}

// get is the connection to a worker, nil if there is none.
func (p *Pool) get(name string) *remote {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.remotes[name]
}

// all are every connection, for the sweeps.
func (p *Pool) all() []*remote {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]*remote, 0, len(p.remotes))
	for _, r := range p.remotes {
		out = append(out, r)
	}
	return out
}

// settleTime is how long after the manager starts a workload waits for
// its config's workers to be connected before it is sent anywhere: a
// restart must not send it to fewer workers than it was, or to none.
const settleTime = 30 * time.Second

// settled reports whether the settle window after this replica started
// leading is over.
func (p *Pool) settled() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return !p.started.IsZero() && p.clock.Since(p.started) > settleTime
}

// settling reports whether the manager just started and some of the
// clusters are still being connected to.
func (p *Pool) settling(clusters []string) bool {
	if p.settled() {
		return false
	}
	for _, name := range clusters {
		if r := p.get(name); r == nil || r.health().reason == ReasonConnecting {
			return true
		}
	}
	return false
}

// errConnect: the worker's API server could not be reached to start
// watching it.
var errConnect = errors.New("cannot connect")

// connect makes the worker's connection the one its kubeconfig says,
// replacing one made from another kubeconfig. The new connection is made
// before the lock is taken: the dispatcher's steps read the pool, and a
// worker that does not answer must not hold them.
func (p *Pool) connect(ctx context.Context, name string, data []byte) error {
	sum := sha256.Sum256(data)
	p.mu.RLock()
	_, ok := p.remotes[name]
	same := ok && p.hashes[name] == sum
	p.mu.RUnlock()
	if same {
		return nil
	}
	cfg, err := restConfigFrom(data)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = p.qps, p.burst
	r, err := newRemote(name, cfg, p.scheme, p.origin, p.clock)
	if err != nil {
		return err
	}
	changed := func() {
		p.clusterEvents <- event.GenericEvent{Object: &musterv1beta1.MultiCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}}
	}
	onWorkload := func(ns, n string) {
		p.workloadEvents <- event.GenericEvent{Object: &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}}}
	}
	// The connection lives as long as the pool, not the reconcile.
	if err := r.start(p.context(ctx), p.probeEvery, changed, onWorkload); err != nil {
		if meta.IsNoMatchError(err) {
			return fmt.Errorf("%w: %v", errNotServed, err)
		}
		return fmt.Errorf("%w: %v", errConnect, err)
	}
	p.mu.Lock()
	if old, ok := p.remotes[name]; ok {
		old.stop()
	}
	p.remotes[name], p.hashes[name] = r, sum
	p.mu.Unlock()
	log.FromContext(ctx).Info("Connecting to a worker cluster", "cluster", name, "server", cfg.Host)
	return nil
}

// context is what the pool's connections run under: the pool's own,
// cancelled when the manager stops.
func (p *Pool) context(ctx context.Context) context.Context {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.ctx != nil {
		return p.ctx
	}
	return context.WithoutCancel(ctx)
}

// Start records when this replica started leading (the settle window
// counts from then, not from the process's start: a standby that takes
// over later reconnects too) and closes every connection when the manager
// stops.
func (p *Pool) Start(ctx context.Context) error {
	p.mu.Lock()
	p.started, p.ctx = p.clock.Now(), ctx
	p.mu.Unlock()
	<-ctx.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, r := range p.remotes {
		r.stop()
		delete(p.remotes, name)
	}
	return nil
}

// NeedLeaderElection: only the leader connects to the workers.
func (p *Pool) NeedLeaderElection() bool { return true }

// disconnect drops a worker's connection.
func (p *Pool) disconnect(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.remotes[name]; ok {
		r.stop()
		delete(p.remotes, name)
		delete(p.hashes, name)
	}
}

// ClusterReconciler connects to the worker cluster of each MultiCluster
// and keeps its Active condition.
type ClusterReconciler struct {
	Client client.Client
	// Secrets reads the kubeconfig Secrets directly, in Muster's
	// namespace only: the manager caches no Secrets.
	Secrets   client.Reader
	Namespace string
	Pool      *Pool
}

// Reconcile connects to one worker cluster and reports whether it answers.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var mc musterv1beta1.MultiCluster
	if err := r.Client.Get(ctx, req.NamespacedName, &mc); err != nil {
		if apierrors.IsNotFound(err) {
			r.Pool.disconnect(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cond, err := r.connect(ctx, &mc)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cond.Reason == ReasonConnecting && !r.Pool.settled() && meta.FindStatusCondition(mc.Status.Conditions, musterv1beta1.MultiClusterActive) != nil {
		// What was last known stands while the connection is made (a
		// restarting manager must not flip its checks, and its queues, to
		// inactive and back), but not past the settle window: a worker
		// that never lists its workloads is not usable.
		return ctrl.Result{RequeueAfter: settleTime}, nil
	}
	orig := mc.DeepCopy()
	if meta.SetStatusCondition(&mc.Status.Conditions, cond) {
		err = r.Client.Status().Patch(ctx, &mc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			log.FromContext(ctx).Info("Worker cluster state", "cluster", klog.KObj(&mc), "active", cond.Status, "reason", cond.Reason)
		}
	}
	again := secretRecheck
	if cond.Reason == musterv1beta1.ReasonClientConnectionFailed || cond.Reason == musterv1beta1.ReasonMissingAPIs || cond.Reason == ReasonConnecting {
		// Not connected: tried again as often as a connection is probed.
		again = r.Pool.probeEvery
	}
	return conflict.Requeue(ctx, ctrl.Result{RequeueAfter: again}, err)
}

// connect reads the cluster's Secret, (re)connects, and says how the
// worker is.
func (r *ClusterReconciler) connect(ctx context.Context, mc *musterv1beta1.MultiCluster) (metav1.Condition, error) {
	c := metav1.Condition{Type: musterv1beta1.MultiClusterActive, Status: metav1.ConditionFalse, ObservedGeneration: mc.Generation}
	var secret corev1.Secret
	err := r.Secrets.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: mc.Spec.KubeConfig.Location}, &secret)
	if client.IgnoreNotFound(err) != nil {
		return c, err
	}
	if err != nil {
		r.Pool.disconnect(mc.Name)
		c.Reason, c.Message = ReasonBadKubeConfig, fmt.Sprintf("Secret %s/%s not found", r.Namespace, mc.Spec.KubeConfig.Location)
		return c, nil
	}
	if err := r.Pool.connect(ctx, mc.Name, secret.Data[musterv1beta1.MultiClusterKubeConfigKey]); err != nil {
		r.Pool.disconnect(mc.Name)
		switch {
		case errors.Is(err, errConnect):
			c.Reason, c.Message = musterv1beta1.ReasonClientConnectionFailed, err.Error()
		case errors.Is(err, errNotServed):
			c.Reason, c.Message = musterv1beta1.ReasonMissingAPIs, err.Error()
		case errors.Is(err, errInsecure):
			c.Reason, c.Message = ReasonInsecureKubeConfig, fmt.Sprintf("Secret %s/%s: %v", r.Namespace, mc.Spec.KubeConfig.Location, err)
		default:
			c.Reason, c.Message = ReasonBadKubeConfig, fmt.Sprintf("Secret %s/%s: %v", r.Namespace, mc.Spec.KubeConfig.Location, err)
		}
		return c, nil
	}
	h := r.Pool.get(mc.Name).health()
	c.Reason, c.Message = h.reason, h.message
	if h.usable {
		c.Status = metav1.ConditionTrue
	}
	return c, nil
}

// SetupWithManager registers the reconciler: it follows the MultiClusters
// and the state changes of their connections.
func (r *ClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&musterv1beta1.MultiCluster{}).
		WatchesRawSource(source.Channel(r.Pool.clusterEvents, &handler.EnqueueRequestForObject{})).
		Named("multicluster").
		Complete(r)
}
