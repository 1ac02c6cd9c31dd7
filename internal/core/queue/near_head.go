package queue

import (
	"slices"

	"github.com/musterhq/muster/internal/core"
)

// NearHead reports whether a pending workload is among the first n of its
// ClusterQueue's pending workloads, or among the first n of its
// LocalQueue's, parked or not, in Before's order, and whether it is queued
// at all. A workload that waits for its queues to appear counts as near:
// nothing is ahead of it.
//
// The answer is kept per ClusterQueue until a change could alter it (see
// nearMemo), so a cycle asks it for every workload it leaves pending for at
// most one pass over the queue.
func (q *Queues) NearHead(key string, n int) (near, queued bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	cq, ok := q.where[key]
	if !ok {
		return false, false
	}
	pq := q.queues[cq]
	if cq == "" || pq == nil {
		return true, true
	}
	return pq.nearHead(n)[key], true
}

// nearHead returns the keys of the first n workloads of the queue and of
// each of its LocalQueues.
func (p *pendingQueue) nearHead(n int) map[string]bool {
	if p.near == nil || p.near.n != n {
		p.near = newNearMemo(n, p.heap.items, p.parked)
	}
	return p.near.keys
}

// nearMemo is NearHead's answer for one queue, kept while the queue's
// changes leave it true: an arrival behind the first n of its ClusterQueue
// and of its LocalQueue, as most of a backlog's are, changes nothing, so a
// cycle after arrivals does not walk the backlog again.
type nearMemo struct {
	n             int
	all           firstN
	perLocalQueue map[localQueueRef]*firstN
	keys          map[string]bool
}

// localQueueRef is a workload's LocalQueue as a map key, without building
// the namespace/name string per workload.
type localQueueRef struct{ namespace, name string }

func localQueueOf(wl *core.Workload) localQueueRef { return localQueueRef{wl.Namespace, wl.Queue} }

func newNearMemo(n int, queued []*core.Workload, parked map[string]*core.Workload) *nearMemo {
	m := &nearMemo{n: n, all: firstN{n: n}, perLocalQueue: map[localQueueRef]*firstN{}}
	offer := func(wl *core.Workload) {
		m.all.offer(wl)
		k := localQueueOf(wl)
		lq := m.perLocalQueue[k]
		if lq == nil {
			lq = &firstN{n: n}
			m.perLocalQueue[k] = lq
		}
		lq.offer(wl)
	}
	for _, wl := range queued {
		offer(wl)
	}
	for _, wl := range parked {
		offer(wl)
	}
	m.keys = make(map[string]bool, n*(1+len(m.perLocalQueue)))
	m.all.mark(m.keys)
	for _, lq := range m.perLocalQueue {
		lq.mark(m.keys)
	}
	return m
}

// changes reports whether queuing wl (new, or in place of its old version
// if wasNear says whether that one was near) would change the answer.
func (m *nearMemo) changes(wl *core.Workload, wasNear bool) bool {
	if wasNear || m.all.takes(wl) {
		return true
	}
	lq := m.perLocalQueue[localQueueOf(wl)]
	return lq == nil || lq.takes(wl)
}

// firstN keeps the first n workloads offered, in Before's order.
type firstN struct {
	n   int
	wls []*core.Workload
}

// takes reports whether offering wl would keep it.
func (f *firstN) takes(wl *core.Workload) bool {
	return f.n > 0 && (len(f.wls) < f.n || Before(wl, f.wls[f.n-1]))
}

func (f *firstN) offer(wl *core.Workload) {
	if !f.takes(wl) {
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
