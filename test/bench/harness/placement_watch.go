package harness

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// Watch feeds the check from its own watch of the target's Workloads,
// strictly in the API server's commit order, until ctx ends. Not the
// kubelet's informer: after its watch closes an informer lists again and
// replays every workload's latest version in key order, and its queue
// hands over a lagging workload's changes together; either can show an
// admission before the release it followed, a node "over-placed" that
// never was. This watch resumes where it stopped; only if the API server
// no longer has that point does it list again, counting a gap and taking
// the list in the order the workloads last changed.
func (p *Placements) Watch(ctx context.Context, dyn dynamic.Interface, t Target, selector string) error {
	if p == nil {
		return nil
	}
	res := dyn.Resource(t.Resource("Workload"))
	rv, err := p.list(ctx, res, selector)
	if err != nil {
		return err
	}
	go func() {
		for ctx.Err() == nil {
			next, err := p.follow(ctx, res, selector, rv)
			rv = next
			switch {
			case ctx.Err() != nil:
				return
			case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
				p.gap()
				if rv, err = p.list(ctx, res, selector); err != nil && ctx.Err() == nil {
					time.Sleep(100 * time.Millisecond)
				}
			case err != nil:
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	return nil
}

// list observes every workload, oldest change first, and returns the
// list's resource version.
func (p *Placements) list(ctx context.Context, res dynamic.NamespaceableResourceInterface, selector string) (string, error) {
	l, err := res.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "", err
	}
	p.observeList(l.Items)
	return l.GetResourceVersion(), nil
}

// observeList takes a list's workloads in the order they last changed, not
// the list's key order: a release before the admission it made room for.
func (p *Placements) observeList(items []unstructured.Unstructured) {
	slices.SortFunc(items, func(a, b unstructured.Unstructured) int {
		return compareRV(a.GetResourceVersion(), b.GetResourceVersion())
	})
	for i := range items {
		p.observeObject(&items[i], false)
	}
}

// follow watches from rv until the watch ends, returning the last resource
// version seen and why it ended.
func (p *Placements) follow(ctx context.Context, res dynamic.NamespaceableResourceInterface, selector, rv string) (string, error) {
	w, err := res.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: rv, AllowWatchBookmarks: true})
	if err != nil {
		return rv, err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return rv, apierrors.FromObject(ev.Object)
		}
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		rv = u.GetResourceVersion()
		switch ev.Type {
		case watch.Added, watch.Modified:
			p.observeObject(u, false)
		case watch.Deleted:
			p.observeObject(u, true)
		}
	}
	return rv, nil
}

func (p *Placements) observeObject(u *unstructured.Unstructured, deleted bool) {
	v, err := viewOf(u)
	if err != nil {
		return
	}
	p.Observe(v.Key, !deleted && v.HasAdmission && !v.Finished(), v.Evicted(), topologyAssignment(u), time.Now())
}

func (p *Placements) gap() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.WatchGaps++
	p.example("the placement watch lost its place and listed again (gap %d)", p.stats.WatchGaps)
}

// compareRV orders etcd resource versions, which are numbers.
func compareRV(a, b string) int {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		panic(fmt.Sprintf("resource versions %q, %q are not numbers", a, b))
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
