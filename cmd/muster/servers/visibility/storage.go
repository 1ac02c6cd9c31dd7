package visibility

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/clock"

	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/queue"
	"github.com/musterhq/muster/internal/core/quota"
	"github.com/musterhq/muster/internal/core/scheduler"
)

// Source is what the API reads: the scheduler's queues and its latest
// pending reasons, in memory.
type Source struct {
	Queues *queue.Queues
	// Synced reports whether the queues hold everything the API had (the
	// replica leads and has rebuilt them).
	Synced func() bool
	// Reason is the latest pending reason of a workload, by key.
	Reason func(key string) string
	// Cache and Clock, when set, let the API run the scheduler's search
	// for one workload (its explanation).
	Cache *quota.Cache
	// Policy is the scheduler's, which the explanation's search runs under.
	Policy scheduler.Config
	Clock  clock.PassiveClock
	// Order, when set, turns a ClusterQueue's priority order into the
	// order its cycles try (admission fair sharing between LocalQueues).
	Order func(clusterQueue string, o queue.PendingOrder) queue.PendingOrder
}

// pending is a ClusterQueue's pending workloads in the order they are
// tried.
func (s Source) pending(clusterQueue string) (queue.PendingOrder, bool) {
	o, ok := s.Queues.Pending(clusterQueue)
	if ok && s.Order != nil {
		o = s.Order(clusterQueue, o)
	}
	return o, ok
}

// ready fails with 503 until the queues are complete: a replica that has
// not rebuilt them at start has only some. Every replica, leader or not,
// answers once it has.
func (s Source) ready() error {
	if s.Synced != nil && !s.Synced() {
		return apierrors.NewServiceUnavailable("this Muster replica has not rebuilt its queues yet (it is starting): try again in a moment")
	}
	return nil
}

// storages are the resources of visibility.muster.dev/v1beta1. The queues
// themselves serve nothing; they exist so their pendingworkloads
// subresources can be installed.
func storages(src Source) map[string]rest.Storage {
	return map[string]rest.Storage{
		"clusterqueues":                  &parent{singular: "clusterqueue", namespaced: false, newObj: func() runtime.Object { return &visibilityv1beta1.ClusterQueue{} }},
		"clusterqueues/pendingworkloads": &pendingInClusterQueue{pendingWorkloads{src: src}},
		"localqueues":                    &parent{singular: "localqueue", namespaced: true, newObj: func() runtime.Object { return &visibilityv1beta1.LocalQueue{} }},
		"localqueues/pendingworkloads":   &pendingInLocalQueue{pendingWorkloads{src: src}},
		"workloads":                      &parent{singular: "workload", namespaced: true, newObj: func() runtime.Object { return &visibilityv1beta1.Workload{} }},
		"workloads/explanation":          &explanation{src: src},
	}
}

// parent is a resource with no verbs of its own.
type parent struct {
	singular   string
	namespaced bool
	newObj     func() runtime.Object
}

var (
	_ rest.Storage              = &parent{}
	_ rest.Scoper               = &parent{}
	_ rest.SingularNameProvider = &parent{}
)

func (p *parent) New() runtime.Object     { return p.newObj() }
func (p *parent) Destroy()                {}
func (p *parent) NamespaceScoped() bool   { return p.namespaced }
func (p *parent) GetSingularName() string { return p.singular }

// pendingWorkloads is what the two subresources share.
type pendingWorkloads struct{ src Source }

func (pendingWorkloads) New() runtime.Object { return &visibilityv1beta1.PendingWorkloadsSummary{} }
func (pendingWorkloads) Destroy()            {}

// NewGetOptions returns the options with their defaults: the parameter
// codec leaves them untouched when the query has no parameters.
func (pendingWorkloads) NewGetOptions() (runtime.Object, bool, string) {
	return &visibilityv1beta1.PendingWorkloadOptions{Limit: visibilityv1beta1.DefaultLimit}, false, ""
}

// pendingInClusterQueue serves clusterqueues/<name>/pendingworkloads.
type pendingInClusterQueue struct{ pendingWorkloads }

var (
	_ rest.GetterWithOptions = &pendingInClusterQueue{}
	_ rest.Scoper            = &pendingInClusterQueue{}
)

func (*pendingInClusterQueue) NamespaceScoped() bool { return false }

func (p *pendingInClusterQueue) Get(_ context.Context, name string, opts runtime.Object) (runtime.Object, error) {
	offset, limit, err := pageOf(opts)
	if err != nil {
		return nil, err
	}
	if err := p.src.ready(); err != nil {
		return nil, err
	}
	order, ok := p.src.pending(name)
	if !ok {
		return nil, apierrors.NewNotFound(visibilityv1beta1.Resource("clusterqueues"), name)
	}
	return p.summary(order.Page(offset, limit, nil)), nil
}

// pendingInLocalQueue serves
// namespaces/<ns>/localqueues/<name>/pendingworkloads.
type pendingInLocalQueue struct{ pendingWorkloads }

var (
	_ rest.GetterWithOptions = &pendingInLocalQueue{}
	_ rest.Scoper            = &pendingInLocalQueue{}
)

func (*pendingInLocalQueue) NamespaceScoped() bool { return true }

func (p *pendingInLocalQueue) Get(ctx context.Context, name string, opts runtime.Object) (runtime.Object, error) {
	offset, limit, err := pageOf(opts)
	if err != nil {
		return nil, err
	}
	if err := p.src.ready(); err != nil {
		return nil, err
	}
	namespace, _ := genericapirequest.NamespaceFrom(ctx)
	ofQueue := func(wl *core.Workload) bool { return wl.Namespace == namespace && wl.Queue == name }
	cq, known := p.src.Queues.ClusterQueueOf(namespace, name)
	if known {
		if order, ok := p.src.pending(cq); ok {
			return p.summary(order.Page(offset, limit, ofQueue)), nil
		}
	}
	// The LocalQueue or its ClusterQueue does not exist (yet): its
	// workloads wait for it, in no ClusterQueue.
	waiting := p.src.Queues.WaitingForClusterQueue(namespace, name)
	if len(waiting) == 0 && !known {
		return nil, apierrors.NewNotFound(visibilityv1beta1.Resource("localqueues"), name)
	}
	page := queue.NewPendingOrder(waiting).Page(offset, limit, nil)
	for i := range page {
		page[i].InClusterQueue = -1
	}
	return p.summary(page), nil
}

// summary turns positions into the API's items.
func (p pendingWorkloads) summary(page []queue.Position) *visibilityv1beta1.PendingWorkloadsSummary {
	items := make([]visibilityv1beta1.PendingWorkload, 0, len(page))
	for _, pos := range page {
		wl := pos.Workload
		items = append(items, visibilityv1beta1.PendingWorkload{
			ObjectMeta:             metav1.ObjectMeta{Name: wl.Name, Namespace: wl.Namespace, CreationTimestamp: metav1.NewTime(wl.Created)},
			Priority:               wl.Priority,
			LocalQueueName:         wl.Queue,
			PositionInClusterQueue: int32(pos.InClusterQueue),
			PositionInLocalQueue:   int32(pos.InLocalQueue),
			Reason:                 p.reason(wl.Key),
		})
	}
	return &visibilityv1beta1.PendingWorkloadsSummary{Items: items}
}

func (p pendingWorkloads) reason(key string) string { return p.src.reasonOf(key) }

func (s Source) reasonOf(key string) string {
	if s.Reason == nil {
		return ""
	}
	return s.Reason(key)
}

func (s Source) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

// pageOf reads offset and limit; a limit above MaxLimit is MaxLimit.
func pageOf(opts runtime.Object) (offset, limit int, err error) {
	o, ok := opts.(*visibilityv1beta1.PendingWorkloadOptions)
	if !ok {
		return 0, 0, fmt.Errorf("invalid options object: %#v", opts)
	}
	if o.Offset < 0 || o.Limit < 0 {
		return 0, 0, apierrors.NewBadRequest("limit and offset must not be negative")
	}
	return int(min(o.Offset, int64(maxInt))), int(min(o.Limit, visibilityv1beta1.MaxLimit)), nil
}

const maxInt = int(^uint(0) >> 1)
