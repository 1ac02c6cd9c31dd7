package harness

import (
	"context"
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
// no longer has that point does it list again, counting a gap.
func (p *Placements) Watch(ctx context.Context, dyn dynamic.Interface, t Target, selector string) error {
	if p == nil {
		return nil
	}
	res := dyn.Resource(t.Resource("Workload"))
	rv, err := p.list(ctx, res, selector)
	if err != nil {
		return err
	}
	go p.watchFrom(ctx, res, selector, rv)
	return nil
}

// watchFrom follows the watch from rv, resuming after each close, and
// lists again (until a list succeeds) only when rv is gone.
func (p *Placements) watchFrom(ctx context.Context, res dynamic.NamespaceableResourceInterface, selector, rv string) {
	for ctx.Err() == nil {
		next, err := p.follow(ctx, res, selector, rv)
		rv = next
		switch {
		case err == nil:
			continue
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			p.gap()
			for rv = ""; rv == "" && ctx.Err() == nil; {
				if rv, err = p.list(ctx, res, selector); err != nil {
					rv = ""
					sleepUntil(ctx, time.Now().Add(100*time.Millisecond))
				}
			}
		default:
			sleepUntil(ctx, time.Now().Add(100*time.Millisecond))
		}
	}
}

// list takes the workloads as one snapshot and returns its resource
// version.
func (p *Placements) list(ctx context.Context, res dynamic.NamespaceableResourceInterface, selector string) (string, error) {
	l, err := res.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "", err
	}
	p.observeSnapshot(l.Items)
	p.seen(l.GetResourceVersion())
	return l.GetResourceVersion(), nil
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
		p.seen(rv)
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

// observeSnapshot takes a list, one consistent state, in two passes: first
// every holder that is gone, released or placed elsewhere lets go, then
// the rest are admitted. Usage only grows in the second pass, so an
// over-placement it finds is one the snapshot has.
func (p *Placements) observeSnapshot(items []unstructured.Unstructured) {
	type state struct {
		holds, evicted bool
		assignment     map[string]any
	}
	now := time.Now()
	states := make(map[string]state, len(items))
	keys := make([]string, 0, len(items))
	for i := range items {
		v, err := viewOf(&items[i])
		if err != nil {
			continue
		}
		states[v.Key] = state{v.HasAdmission && !v.Finished(), v.Evicted(), topologyAssignment(&items[i])}
		keys = append(keys, v.Key)
	}
	p.mu.Lock()
	for key, h := range p.holding {
		s, ok := states[key]
		if !ok || !s.holds || !p.samePlacement(h, s.assignment) {
			p.release(key)
		}
	}
	p.mu.Unlock()
	slices.Sort(keys)
	for _, key := range keys {
		s := states[key]
		p.Observe(key, s.holds, s.evicted, s.assignment, now)
	}
}

// samePlacement is whether a holder's placement is the assignment's.
func (p *Placements) samePlacement(h held, assignment map[string]any) bool {
	if assignment == nil {
		return h.placed == nil
	}
	placed, err := p.target.placement(assignment)
	return err == nil && slices.Equal(placed, h.placed)
}

func (p *Placements) gap() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.WatchGaps++
	p.example("the placement watch lost its place and listed again (gap %d)", p.stats.WatchGaps)
}

// seen records how far the watch has come.
func (p *Placements) seen(rv string) {
	n, ok := rvNumber(rv)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at = max(p.at, n)
}

// CatchUp waits until the watch has seen rv (the newest version of any
// workload the run saw), so the check ends where the run did; it gives up
// at timeout, counting the check as behind.
func (p *Placements) CatchUp(ctx context.Context, rv string, timeout time.Duration) {
	if p == nil {
		return
	}
	want, ok := rvNumber(rv)
	if !ok {
		return
	}
	deadline := time.Now().Add(timeout)
	for {
		p.mu.Lock()
		at := p.at
		if at < want && (time.Now().After(deadline) || ctx.Err() != nil) {
			p.stats.Behind = true
		}
		p.mu.Unlock()
		if at >= want || p.Stats().Behind {
			return
		}
		sleepUntil(ctx, time.Now().Add(100*time.Millisecond))
	}
}

// rvNumber reads an etcd resource version, which the harness's API server
// makes a number (opaque to clients in general).
func rvNumber(rv string) (uint64, bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil
}
