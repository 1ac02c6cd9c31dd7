package scheduling

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// coalescing maps an object to the requests it affects and enqueues them
// after statusCoalesceDelay: the delaying queue keeps one entry per request,
// so a burst of workload changes becomes a single status write per queue.
func coalescing(mapFn func(client.Object) []reconcile.Request) handler.EventHandler {
	return coalescingAfter(func() time.Duration { return statusCoalesceDelay }, mapFn)
}

// coalescingAfter is coalescing with a delay that may change over time.
func coalescingAfter(delay func() time.Duration, mapFn func(client.Object) []reconcile.Request) handler.EventHandler {
	add := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		d := delay()
		for _, o := range objs {
			for _, req := range mapFn(o) {
				q.AddAfter(req, d)
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.Object)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.Object)
		},
	}
}
