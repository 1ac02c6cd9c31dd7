package queue

import (
	"container/heap"
	"context"
	"sort"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/core"
)

// Queues holds the pending workloads: per ClusterQueue, ordered by priority
// then creation. Workloads whose LocalQueue or ClusterQueue is unknown wait
// aside until it appears. Under BestEffortFIFO a workload that did not fit is
// parked until something that could make it fit happens (quota freed, queue
// or flavor changed), instead of being retried every cycle.
type Queues struct {
	mu sync.Mutex
	// localQueues maps namespace/name to the ClusterQueue it feeds.
	localQueues map[string]string
	queues      map[string]*pendingQueue
	// orphans are pending workloads whose queue chain is incomplete.
	orphans map[string]*core.Workload
	// where maps a pending workload's key to its ClusterQueue ("" if orphan).
	where map[string]string
	// perLocalQueue counts the pending workloads (queued, parked or
	// orphaned) of each LocalQueue, so status refreshes need not walk them.
	perLocalQueue map[string]int
	wake          chan struct{}
	// unparks counts Unpark calls, so a cycle does not park a workload on
	// the strength of a snapshot older than a release that would have
	// admitted it.
	unparks uint64
	// needsPreemption is when each pending workload was first found to fit
	// only by preempting; it is forgotten when the workload changes or
	// leaves.
	needsPreemption map[string]time.Time
	// inserts counts the workloads queued that were not queued before.
	inserts uint64
}

// NewQueues returns empty queues.
func NewQueues() *Queues {
	return &Queues{
		localQueues: map[string]string{},
		queues:      map[string]*pendingQueue{},
		orphans:     map[string]*core.Workload{},
		where:       map[string]string{},
		wake:        make(chan struct{}, 1),

		perLocalQueue:   map[string]int{},
		needsPreemption: map[string]time.Time{},
	}
}

// NeedsPreemption records that a pending workload fits only by preempting,
// from now unless recorded before.
func (q *Queues) NeedsPreemption(key string, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, queued := q.where[key]; !queued {
		return
	}
	if _, ok := q.needsPreemption[key]; !ok {
		q.needsPreemption[key] = now
	}
}

// NoLongerNeedsPreemption forgets when a workload needed preemption: it
// waits for another reason now (behind a higher-priority workload, for quota
// no preemption can free), so its delay starts over if it needs preemption
// again, instead of letting it preempt at once for a need long past.
func (q *Queues) NoLongerNeedsPreemption(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.needsPreemption, key)
}

// UpsertLocalQueue records which ClusterQueue a LocalQueue feeds and moves
// its waiting workloads there: those waiting aside, and those of the
// ClusterQueue it fed before (a LocalQueue deleted and recreated pointing
// elsewhere, faster than its deletion was seen).
func (q *Queues) UpsertLocalQueue(namespace, name, clusterQueue string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := namespace + "/" + name
	if old, ok := q.localQueues[key]; ok && old != clusterQueue {
		q.orphanLocalQueue(key)
	}
	q.localQueues[key] = clusterQueue
	q.adoptOrphans()
}

// DeleteLocalQueue forgets a LocalQueue; its pending workloads wait aside.
func (q *Queues) DeleteLocalQueue(namespace, name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := namespace + "/" + name
	delete(q.localQueues, key)
	q.orphanLocalQueue(key)
}

// orphanLocalQueue sets the pending workloads of a LocalQueue aside.
func (q *Queues) orphanLocalQueue(key string) {
	for _, pq := range q.queues {
		for _, wl := range pq.all() {
			if core.LocalQueueKey(wl) == key {
				pq.remove(wl.Key)
				q.orphans[wl.Key] = wl
				q.where[wl.Key] = ""
			}
		}
	}
}

// UpsertClusterQueue creates or updates the pending queue of a ClusterQueue
// and gives its parked workloads another chance.
func (q *Queues) UpsertClusterQueue(name string, strategy core.QueueingStrategy) {
	q.mu.Lock()
	defer q.mu.Unlock()
	pq, ok := q.queues[name]
	if !ok {
		pq = newPendingQueue()
		q.queues[name] = pq
	}
	pq.strategy = strategy
	pq.unpark()
	q.adoptOrphans()
	q.notify()
}

// DeleteClusterQueue drops a ClusterQueue; its workloads wait aside.
func (q *Queues) DeleteClusterQueue(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	pq, ok := q.queues[name]
	if !ok {
		return
	}
	for _, wl := range pq.all() {
		q.orphans[wl.Key] = wl
		q.where[wl.Key] = ""
	}
	delete(q.queues, name)
}

// AddOrUpdate queues a pending workload. An update that changes nothing the
// scheduler looks at keeps the workload where it is (parked or not), so that
// status writes do not trigger new attempts.
func (q *Queues) AddOrUpdate(wl *core.Workload) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if cq, ok := q.where[wl.Key]; ok {
		if old := q.find(wl.Key, cq); old != nil && core.SameRequest(old, wl) {
			q.replace(wl, cq)
			return
		}
		q.delete(wl.Key)
	}
	q.insert(wl)
	q.notify()
}

// Delete removes a workload that is no longer pending.
func (q *Queues) Delete(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.delete(key)
}

// Forget removes a pending workload that is gone (deleted, deactivated):
// the workloads of its ClusterQueue that waited behind it get another
// chance.
func (q *Queues) Forget(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	cq, ok := q.where[key]
	q.delete(key)
	if ok && cq != "" {
		q.unpark(cq)
	}
}

// Counts returns how many ClusterQueues and LocalQueues there are.
func (q *Queues) Counts() (clusterQueues, localQueues int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queues), len(q.localQueues)
}

// Unpark gives the parked workloads of the named ClusterQueues (all when
// none are named) another chance, e.g. because quota was freed.
func (q *Queues) Unpark(clusterQueues ...string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(clusterQueues) == 0 {
		for name := range q.queues {
			clusterQueues = append(clusterQueues, name)
		}
	}
	q.unpark(clusterQueues...)
}

// unpark marks the named queues' parked workloads due for another chance.
func (q *Queues) unpark(clusterQueues ...string) {
	q.unparks++
	for _, name := range clusterQueues {
		if pq, ok := q.queues[name]; ok {
			pq.unparkDue = true
		}
	}
	q.notify()
}

// Park sets a workload that did not fit aside until Unpark. decided is the
// version the cycle decided on and seq what Heads returned for that cycle:
// if something was unparked since, or the workload changed what it asks for
// (shrunk, reprioritised, moved) while it was being decided, it stays to be
// tried again instead.
func (q *Queues) Park(decided *core.Workload, seq uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if seq != q.unparks {
		return
	}
	pq, ok := q.queues[q.where[decided.Key]]
	if !ok {
		return
	}
	// The cycle mostly decides on the queued workload itself: comparing its
	// requests with themselves was a twentieth of a busy manager's CPU.
	if now := pq.get(decided.Key); now != nil && (now == decided || core.SameRequest(now, decided)) {
		pq.park(decided.Key)
	}
}

// ParkUntil parks as Park does, and has the queue tried again no later
// than the given time, when the workload's wait alone changes what it is
// owed (it starts starving, or held room yields to it): nothing else would
// wake it then.
func (q *Queues) ParkUntil(decided *core.Workload, seq uint64, at time.Time) {
	q.Park(decided, seq)
	q.mu.Lock()
	defer q.mu.Unlock()
	if pq, ok := q.queues[q.where[decided.Key]]; ok && (pq.unparkAt.IsZero() || at.Before(pq.unparkAt)) {
		pq.unparkAt = at
	}
}

// UnparkDue unparks the queues whose ParkUntil time has come; the
// scheduler calls it before each cycle's Heads.
func (q *Queues) UnparkDue(now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var due []string
	for name, pq := range q.queues {
		if !pq.unparkAt.IsZero() && !pq.unparkAt.After(now) {
			pq.unparkAt = time.Time{}
			due = append(due, name)
		}
	}
	if len(due) > 0 {
		q.unpark(due...)
	}
}

// Heads returns, per ClusterQueue, the workloads that are not parked, in
// queue order, and the sequence number to park them with.
func (q *Queues) Heads() (map[string][]*core.Workload, uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	heads := map[string][]*core.Workload{}
	for name, pq := range q.queues {
		if pq.unparkDue {
			pq.unpark()
		}
		if active := pq.active(); len(active) > 0 {
			heads[name] = q.withPreemptionTimes(active)
		}
	}
	return heads, q.unparks
}

// withPreemptionTimes gives the heads that need preemption their time,
// on copies: the queued workloads are shared with the controllers' updates.
func (q *Queues) withPreemptionTimes(wls []*core.Workload) []*core.Workload {
	if len(q.needsPreemption) == 0 {
		return wls
	}
	for i, wl := range wls {
		if t, ok := q.needsPreemption[wl.Key]; ok {
			c := *wl
			c.NeedsPreemptionSince = t
			wls[i] = &c
		}
	}
	return wls
}

// Strategy returns a ClusterQueue's queueing strategy.
func (q *Queues) Strategy(clusterQueue string) core.QueueingStrategy {
	q.mu.Lock()
	defer q.mu.Unlock()
	if pq, ok := q.queues[clusterQueue]; ok {
		return pq.strategy
	}
	return core.BestEffortFIFO
}

// ClusterQueueOf returns the ClusterQueue a LocalQueue feeds.
func (q *Queues) ClusterQueueOf(namespace, localQueue string) (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	cq, ok := q.localQueues[namespace+"/"+localQueue]
	return cq, ok
}

// PendingInClusterQueue is the number of pending workloads (queued or
// parked) of a ClusterQueue.
func (q *Queues) PendingInClusterQueue(name string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if pq := q.queues[name]; pq != nil {
		return len(pq.heap.items) + len(pq.parked)
	}
	return 0
}

// PendingByStatus splits a ClusterQueue's pending workloads into those to
// be tried (active) and those parked until something frees (inadmissible),
// Kueue's two statuses.
func (q *Queues) PendingByStatus(name string) (active, inadmissible int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if pq := q.queues[name]; pq != nil {
		return len(pq.heap.items), len(pq.parked)
	}
	return 0, 0
}

// LocalQueuePendingByStatus is PendingByStatus for a LocalQueue; its
// workloads waiting for a ClusterQueue count as inadmissible.
func (q *Queues) LocalQueuePendingByStatus(namespace, name string) (active, inadmissible int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := namespace + "/" + name
	total := q.perLocalQueue[key]
	pq := q.queues[q.localQueues[key]]
	if pq == nil {
		return 0, total
	}
	inadmissible = pq.parkedPerLocalQueue[key]
	return total - inadmissible, inadmissible
}

// PendingInLocalQueue is the number of pending workloads of a LocalQueue,
// including those waiting for their ClusterQueue to exist.
func (q *Queues) PendingInLocalQueue(namespace, name string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.perLocalQueue[namespace+"/"+name]
}

// Wait blocks until something may be admissible, or ctx ends (false).
func (q *Queues) Wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-q.wake:
		return true
	}
}

// Notify wakes the scheduler.
func (q *Queues) Notify() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.notify()
}

func (q *Queues) notify() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// count adds n to the workload's LocalQueue count.
func (q *Queues) count(wl *core.Workload, n int) {
	lq := core.LocalQueueKey(wl)
	if q.perLocalQueue[lq] += n; q.perLocalQueue[lq] <= 0 {
		delete(q.perLocalQueue, lq)
	}
}

// Inserts counts the workloads ever queued that were not queued before: the
// scheduler watches it settle after a start.
func (q *Queues) Inserts() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.inserts
}

func (q *Queues) insert(wl *core.Workload) {
	q.inserts++
	q.count(wl, 1)
	cq, ok := q.localQueues[core.LocalQueueKey(wl)]
	pq := q.queues[cq]
	if !ok || pq == nil {
		q.orphans[wl.Key] = wl
		q.where[wl.Key] = ""
		return
	}
	pq.push(wl)
	q.where[wl.Key] = cq
}

func (q *Queues) delete(key string) {
	cq, ok := q.where[key]
	if !ok {
		return
	}
	if wl := q.find(key, cq); wl != nil {
		q.count(wl, -1)
	}
	delete(q.where, key)
	delete(q.orphans, key)
	delete(q.needsPreemption, key)
	if pq := q.queues[cq]; pq != nil {
		pq.remove(key)
	}
}

func (q *Queues) find(key, cq string) *core.Workload {
	if cq == "" {
		return q.orphans[key]
	}
	if pq := q.queues[cq]; pq != nil {
		return pq.get(key)
	}
	return nil
}

func (q *Queues) replace(wl *core.Workload, cq string) {
	if old := q.find(wl.Key, cq); old != nil {
		q.count(old, -1)
	}
	q.count(wl, 1)
	if cq == "" {
		q.orphans[wl.Key] = wl
		return
	}
	q.queues[cq].replace(wl)
}

func (q *Queues) adoptOrphans() {
	moved := false
	for key, wl := range q.orphans {
		cq, ok := q.localQueues[wl.Namespace+"/"+wl.Queue]
		if pq := q.queues[cq]; ok && pq != nil {
			delete(q.orphans, key)
			pq.push(wl)
			q.where[key] = cq
			moved = true
		}
	}
	if moved {
		q.notify()
	}
}

// pendingQueue is one ClusterQueue's pending workloads: a heap of those to
// try, and the parked ones.
type pendingQueue struct {
	strategy core.QueueingStrategy
	heap     workloadHeap
	parked   map[string]*core.Workload
	// unparkDue defers an Unpark to the next Heads: the many releases
	// between two cycles (every finished workload is one) unpark once.
	unparkDue bool
	// unparkAt is when a parked workload must be tried again even if
	// nothing is released (it starts starving then; see ParkUntil).
	unparkAt time.Time
	// version counts the changes of membership or order; sorted is the
	// queue order as of sortedAt, for readers of positions (Pending).
	version, sortedAt uint64
	sorted            PendingOrder
	// parkedPerLocalQueue counts the parked workloads of each LocalQueue
	// (namespace/name), for its pending metrics by status.
	parkedPerLocalQueue map[string]int
	// near is NearHead's answer, nil once a change may have changed it.
	near *nearMemo
}

func newPendingQueue() *pendingQueue {
	return &pendingQueue{heap: workloadHeap{index: map[string]int{}}, parked: map[string]*core.Workload{}, parkedPerLocalQueue: map[string]int{}}
}

func (p *pendingQueue) push(wl *core.Workload) {
	p.version++
	if p.near != nil && p.near.changes(wl, false) {
		p.near = nil
	}
	heap.Push(&p.heap, wl)
}

func (p *pendingQueue) get(key string) *core.Workload {
	if i, ok := p.heap.index[key]; ok {
		return p.heap.items[i]
	}
	return p.parked[key]
}

func (p *pendingQueue) replace(wl *core.Workload) {
	p.version++
	if p.near != nil && p.near.changes(wl, p.near.keys[wl.Key]) {
		p.near = nil
	}
	if i, ok := p.heap.index[wl.Key]; ok {
		p.heap.items[i] = wl
		heap.Fix(&p.heap, i)
		return
	}
	if old, ok := p.parked[wl.Key]; ok {
		p.countParked(old, -1)
	}
	p.parked[wl.Key] = wl
	p.countParked(wl, 1)
}

func (p *pendingQueue) countParked(wl *core.Workload, n int) {
	k := core.LocalQueueKey(wl)
	if p.parkedPerLocalQueue[k] += n; p.parkedPerLocalQueue[k] <= 0 {
		delete(p.parkedPerLocalQueue, k)
	}
}

func (p *pendingQueue) remove(key string) {
	p.version++
	if p.near != nil && p.near.keys[key] {
		p.near = nil
	}
	if i, ok := p.heap.index[key]; ok {
		heap.Remove(&p.heap, i)
	}
	if wl, ok := p.parked[key]; ok {
		p.countParked(wl, -1)
		delete(p.parked, key)
	}
}

func (p *pendingQueue) park(key string) {
	if i, ok := p.heap.index[key]; ok {
		wl := heap.Remove(&p.heap, i).(*core.Workload)
		p.parked[key] = wl
		p.countParked(wl, 1)
	}
}

func (p *pendingQueue) unpark() {
	p.unparkDue = false
	for key, wl := range p.parked {
		delete(p.parked, key)
		heap.Push(&p.heap, wl)
	}
	clear(p.parkedPerLocalQueue)
}

// active returns the workloads to try, in order.
func (p *pendingQueue) active() []*core.Workload {
	out := append([]*core.Workload(nil), p.heap.items...)
	sort.Slice(out, func(i, j int) bool { return Before(out[i], out[j]) })
	return out
}

func (p *pendingQueue) all() []*core.Workload {
	out := append([]*core.Workload(nil), p.heap.items...)
	for _, wl := range p.parked {
		out = append(out, wl)
	}
	return out
}

// Before orders workloads: higher priority first, then older, then by key so
// the order is total and stable.
func Before(a, b *core.Workload) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	return a.Key < b.Key
}

type workloadHeap struct {
	items []*core.Workload
	index map[string]int
}

func (h workloadHeap) Len() int           { return len(h.items) }
func (h workloadHeap) Less(i, j int) bool { return Before(h.items[i], h.items[j]) }
func (h workloadHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.items[i].Key] = i
	h.index[h.items[j].Key] = j
}

func (h *workloadHeap) Push(x any) {
	wl := x.(*core.Workload)
	h.index[wl.Key] = len(h.items)
	h.items = append(h.items, wl)
}

func (h *workloadHeap) Pop() any {
	n := len(h.items)
	wl := h.items[n-1]
	h.items = h.items[:n-1]
	delete(h.index, wl.Key)
	return wl
}

// Lookup returns a pending workload with its ClusterQueue ("" while its
// queue chain is incomplete), false if it is not pending here. The copy
// carries when it first needed preemption, as a cycle's heads do.
func (q *Queues) Lookup(key string) (*core.Workload, string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	cq, ok := q.where[key]
	if !ok {
		return nil, "", false
	}
	wl := q.find(key, cq)
	if wl == nil {
		return nil, "", false
	}
	c := *wl
	c.NeedsPreemptionSince = q.needsPreemption[key]
	return &c, cq, true
}
