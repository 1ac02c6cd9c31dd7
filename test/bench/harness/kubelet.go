package harness

import (
	"context"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// workloadInformer watches the target's Workloads that match selector,
// keeping only their metadata and status: the spec does not matter to the
// harness, and dropping it keeps 100k watched workloads cheap.
func workloadInformer(dyn dynamic.Interface, t Target, selector string) cache.SharedIndexInformer {
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.LabelSelector = selector })
	inf := factory.ForResource(t.Resource("Workload")).Informer()
	_ = inf.SetTransform(func(o any) (any, error) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			u.SetManagedFields(nil)
			delete(u.Object, "spec")
		}
		return o, nil
	})
	return inf
}

// kubeletWorkers is how many of a run's finishes and evictions the kubelet
// writes at once. A cluster's kubelets and job controllers finish jobs
// independently, so the stand-in must not be what holds a finished
// workload's quota: while a creation burst keeps the API server's writes
// at seconds each, a small pool finishes a few workloads a second against
// admissions at a hundred, and the workloads left holding quota past their
// runtime are what a system then preempts (docs/performance.md,
// "Large-scale evictions: the kubelet's writers"). More writers never
// write faster than the API server answers.
const kubeletWorkers = 256

// Kubelet stands in for the jobs: it finishes an admitted workload
// runtimeMs after it saw the admission, and completes an eviction (the job
// stopped, quota handed back) as soon as it sees one — what Kueue's
// performance runner does, for both systems alike.
type Kubelet struct {
	target   Target
	client   dynamic.NamespaceableResourceInterface
	recorder *Recorder
	informer cache.SharedIndexInformer
	// queue retries an action whose write failed for any reason but a
	// conflict (retried at once) or the workload being gone: under a 50k
	// burst the API server times requests out, and a finish dropped there
	// would leave its workload running and the run waiting for it forever.
	queue workqueue.TypedRateLimitingInterface[action]

	mu sync.Mutex
	// admissions counts each workload's admissions, so the finish timer of
	// an earlier admission does not finish a later one; running is true
	// while the current admission's timer is pending.
	admissions map[string]int
	running    map[string]bool
	// hold is never finished: the sweep's quota blocker.
	hold map[string]bool
	// writes counts the kubelet's own status writes; retries, the
	// actions written again after a failed write.
	writes, retries int
}

type action struct {
	key    string
	evict  bool
	admSeq int
}

// NewKubelet watches the target's Workloads that match selector.
func NewKubelet(dyn dynamic.Interface, target Target, rec *Recorder, selector string) *Kubelet {
	gvr := target.Resource("Workload")
	k := &Kubelet{
		target: target, client: dyn.Resource(gvr), recorder: rec,
		informer: workloadInformer(dyn, target, selector),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[action](
			100*time.Millisecond, 10*time.Second)),
		admissions: map[string]int{}, running: map[string]bool{}, hold: map[string]bool{},
	}
	_, _ = k.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { k.observe(o) },
		UpdateFunc: func(_, o any) { k.observe(o) },
	})
	return k
}

// Hold marks a workload the kubelet never finishes.
func (k *Kubelet) Hold(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.hold[key] = true
}

// Start runs the watch and workers until ctx ends.
func (k *Kubelet) Start(ctx context.Context, workers int) error {
	go k.informer.Run(ctx.Done())
	go func() { <-ctx.Done(); k.queue.ShutDown() }()
	for range workers {
		go k.work(ctx)
	}
	if !cache.WaitForCacheSync(ctx.Done(), k.informer.HasSynced) {
		return ctx.Err()
	}
	return nil
}

// NewestVersion is the highest resource version of the workloads the
// kubelet has seen ("" if none).
func (k *Kubelet) NewestVersion() string {
	var newest uint64
	for _, o := range k.informer.GetStore().List() {
		if u, ok := o.(*unstructured.Unstructured); ok {
			if n, ok := rvNumber(u.GetResourceVersion()); ok {
				newest = max(newest, n)
			}
		}
	}
	if newest == 0 {
		return ""
	}
	return strconv.FormatUint(newest, 10)
}

// Writes is how many status writes the kubelet made.
func (k *Kubelet) Writes() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.writes
}

// Retries is how many times a failed write was tried again.
func (k *Kubelet) Retries() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.retries
}

func (k *Kubelet) observe(o any) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	v, err := viewOf(u)
	if err != nil {
		return
	}
	k.recorder.Observe(v, time.Now())
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case v.Finished() || k.hold[v.Key]:
	case v.Evicted() && v.HasAdmission:
		k.queue.Add(action{key: v.Key, evict: true})
	case !v.HasAdmission:
		k.running[v.Key] = false
	case v.Admitted() && !k.running[v.Key]:
		k.admissions[v.Key]++
		k.running[v.Key] = true
		seq := k.admissions[v.Key]
		time.AfterFunc(time.Duration(v.RuntimeMs)*time.Millisecond, func() {
			k.queue.Add(action{key: v.Key, admSeq: seq})
		})
	}
}

func (k *Kubelet) work(ctx context.Context) {
	for {
		a, shutdown := k.queue.Get()
		if shutdown {
			return
		}
		if k.do(ctx, a) && ctx.Err() == nil {
			k.mu.Lock()
			k.retries++
			k.mu.Unlock()
			k.queue.AddRateLimited(a)
		} else {
			k.queue.Forget(a)
		}
		k.queue.Done(a)
	}
}

// do writes the finish or the end of an eviction onto the latest version,
// retrying on conflicts with whatever the controller wrote meanwhile. It
// reports whether the action is still to do: a read or write failed.
func (k *Kubelet) do(ctx context.Context, a action) (again bool) {
	for attempt := 0; attempt < 10 && ctx.Err() == nil; attempt++ {
		v, err := k.latest(ctx, a.key, attempt > 0)
		if err != nil {
			return !apierrors.IsNotFound(err)
		}
		if v == nil || !k.stillWanted(v, a) {
			return false
		}
		conds := append([]metav1.Condition(nil), v.Conditions...)
		if a.evict {
			for _, c := range k.target.requeueConditions {
				meta.SetStatusCondition(&conds, c)
			}
		} else {
			meta.SetStatusCondition(&conds, metav1.Condition{Type: "Finished", Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "Finished by the benchmark's kubelet"})
		}
		patch, err := statusPatch(v.ResourceVersion, conds, a.evict)
		if err != nil {
			return false
		}
		_, err = k.client.Namespace(v.Namespace).Patch(ctx, v.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		if err == nil {
			k.mu.Lock()
			k.writes++
			k.mu.Unlock()
			return false
		}
		if !apierrors.IsConflict(err) {
			return !apierrors.IsNotFound(err)
		}
	}
	return true
}

func (k *Kubelet) stillWanted(v *wlView, a action) bool {
	if a.evict {
		return v.Evicted() && v.HasAdmission
	}
	k.mu.Lock()
	current := k.running[a.key] && k.admissions[a.key] == a.admSeq
	k.mu.Unlock()
	return current && v.Admitted() && !v.Evicted() && !v.Finished()
}

// latest is the watched version, or after a conflict a fresh read; nil
// when the watch no longer has the workload.
func (k *Kubelet) latest(ctx context.Context, key string, fresh bool) (*wlView, error) {
	if fresh {
		ns, name, _ := cache.SplitMetaNamespaceKey(key)
		u, err := k.client.Namespace(ns).Get(ctx, name, metav1.GetOptions{}, "status")
		if err != nil {
			return nil, err
		}
		v, _ := viewOf(u)
		return v, nil
	}
	o, ok, err := k.informer.GetStore().GetByKey(key)
	if err != nil || !ok {
		return nil, nil
	}
	v, _ := viewOf(o.(*unstructured.Unstructured))
	return v, nil
}
