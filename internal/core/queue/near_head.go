package queue

import (
	"slices"

	"github.com/musterhq/muster/internal/core"
)

// NearHead reports whether a pending workload is among the first n of its
// ClusterQueue's pending workloads, or among the first n of its
// LocalQueue's, parked or not, in Before's order. A workload that waits
// for its queues to appear counts as near: nothing is ahead of it.
//
// The answer is memoized per ClusterQueue until its membership or order
// changes, so a cycle asks it for every workload it leaves pending for one
// pass over the queue.
func (q *Queues) NearHead(key string, n int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	cq, ok := q.where[key]
	if !ok {
		return false
	}
	pq := q.queues[cq]
	if cq == "" || pq == nil {
		return true
	}
	return pq.nearHead(n)[key]
}

// nearHead returns the keys of the first n workloads of the queue and of
// each of its LocalQueues.
func (p *pendingQueue) nearHead(n int) map[string]bool {
	if p.near != nil && p.nearVersion == p.version && p.nearN == n {
		return p.near
	}
	all := firstN{n: n}
	type localQueue struct{ namespace, name string }
	perLocalQueue := map[localQueue]*firstN{}
	offer := func(wl *core.Workload) {
		all.offer(wl)
		k := localQueue{wl.Namespace, wl.Queue}
		lq := perLocalQueue[k]
		if lq == nil {
			lq = &firstN{n: n}
			perLocalQueue[k] = lq
		}
		lq.offer(wl)
	}
	for _, wl := range p.heap.items {
		offer(wl)
	}
	for _, wl := range p.parked {
		offer(wl)
	}
	near := make(map[string]bool, n*(1+len(perLocalQueue)))
	all.mark(near)
	for _, lq := range perLocalQueue {
		lq.mark(near)
	}
	p.near, p.nearVersion, p.nearN = near, p.version, n
	return near
}

// firstN keeps the first n workloads offered, in Before's order.
type firstN struct {
	n   int
	wls []*core.Workload
}

func (f *firstN) offer(wl *core.Workload) {
	if f.n <= 0 || (len(f.wls) == f.n && !Before(wl, f.wls[f.n-1])) {
		return
	}
	i, _ := slices.BinarySearchFunc(f.wls, wl, func(a, b *core.Workload) int {
		if Before(a, b) {
			return -1
		}
		return 1
	})
	if len(f.wls) == f.n {
		f.wls = f.wls[:f.n-1]
	}
	f.wls = slices.Insert(f.wls, i, wl)
}

func (f *firstN) mark(keys map[string]bool) {
	for _, wl := range f.wls {
		keys[wl.Key] = true
	}
}
