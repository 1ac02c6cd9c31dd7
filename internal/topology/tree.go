package topology

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// MaxLevels bounds the depth of a topology, as Kueue's Topology API does.
const MaxLevels = 8

// HostnameLabel is the well-known node label that may only be the last level.
const HostnameLabel = "kubernetes.io/hostname"

// Resources maps a resource name to an amount in its unit (cpu in milli).
type Resources map[string]int64

// Node is what the tree needs to know of a cluster node. The caller derives
// Allocatable and Pods from the node's status; the usage of the pods on it
// comes separately through AddUsage.
type Node struct {
	Name        string
	Labels      map[string]string
	Allocatable Resources
	// Pods is the number of pods the node admits (allocatable pods).
	Pods int64
}

// Usage is capacity taken on one node: pods bound there, or pods an
// admitted workload's assignment promised there.
type Usage struct {
	Resources Resources
	Pods      int64
}

// Tree is the long-lived topology, updated by events. It is safe for
// concurrent use: events may arrive while a cycle works on a Snapshot.
type Tree struct {
	mu     sync.Mutex
	levels []string
	res    *resourceIndex
	nodes  map[string]*nodeEntry
	// sorted holds the nodes in the topology by their path key, kept in
	// order by each node event (a binary search and a copy of pointers),
	// so a layout rebuild is one linear pass, not a sort.
	sorted []*nodeEntry

	version uint64
	lay     *layout // cached layout, nil after a node joined, left or moved
	rows    *rows   // free capacity in layout order, nil when stale
}

// rows mirrors the nodes' free capacity in layout order, kept up to date by
// the events, so that a snapshot is two copies of flat arrays.
type rows struct {
	nres int
	free []int64 // free[pos*nres+r]
	pods []int64
}

// nodeEntry is one node's state. A node may get usage before its node event
// arrives (present false); it joins the topology once it is set and carries
// every level label (values non-nil).
type nodeEntry struct {
	name     string
	present  bool
	values   []string
	key      string // pathKey, the layout's sort key
	alloc    []int64
	used     []int64
	podCap   int64
	podsUsed int64
	// free caches max(alloc-used, 0), refreshed by every event on the
	// node; pos is the node's index in the current layout, or -1.
	free []int64
	pos  int32
}

// inTopology says whether the node is offered: set, with every level label.
func (e *nodeEntry) inTopology() bool { return e.present && e.values != nil }

// refresh recomputes the cached free capacity after an event.
func (e *nodeEntry) refresh() {
	n := max(len(e.alloc), len(e.used))
	e.free = grow(e.free[:0], n)
	for r := range e.free {
		e.free[r] = max(at(e.alloc, r)-at(e.used, r), 0)
	}
}

// New returns an empty tree over the given level label keys, coarsest first.
func New(levels []string) (*Tree, error) {
	if err := validateLevels(levels); err != nil {
		return nil, err
	}
	return &Tree{
		levels: append([]string(nil), levels...),
		res:    &resourceIndex{index: map[string]int{}},
		nodes:  map[string]*nodeEntry{},
	}, nil
}

func validateLevels(levels []string) error {
	if len(levels) == 0 || len(levels) > MaxLevels {
		return fmt.Errorf("topology needs 1 to %d levels, got %d", MaxLevels, len(levels))
	}
	seen := map[string]bool{}
	for i, l := range levels {
		switch {
		case l == "":
			return fmt.Errorf("level %d has an empty label key", i)
		case seen[l]:
			return fmt.Errorf("level %q appears twice", l)
		case l == HostnameLabel && i != len(levels)-1:
			return fmt.Errorf("level %q may only be the last", l)
		}
		seen[l] = true
	}
	return nil
}

// Levels returns the level label keys, coarsest first.
func (t *Tree) Levels() []string { return append([]string(nil), t.levels...) }

// Version counts the events applied; a snapshot records the version it saw.
func (t *Tree) Version() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.version
}

// SetNode adds a node or updates its labels and allocatable capacity. Its
// usage is kept.
func (t *Tree) SetNode(n Node) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.version++
	e := t.entry(n.Name)
	if values := t.levelValues(n.Labels); !e.present || !equalValues(e.values, values) {
		t.moveEntry(e, values)
	}
	e.alloc = t.vector(n.Allocatable, e.alloc[:0])
	e.podCap = n.Pods
	e.refresh()
	t.syncRow(e)
}

// RemoveNode forgets a node and its usage: its pods are gone with it, and
// later usage removals for it are ignored.
func (t *Tree) RemoveNode(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.version++
	if e, ok := t.nodes[name]; ok {
		if e.inTopology() {
			t.unsort(e.key)
			t.shapeChanged()
		}
		delete(t.nodes, name)
	}
}

// AddUsage takes capacity on a node, for example when a pod is bound there.
// Usage for a node not yet known is kept until its node event arrives.
func (t *Tree) AddUsage(node string, u Usage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.version++
	e := t.entry(node)
	e.used = t.addVector(e.used, u.Resources, 1)
	e.podsUsed += u.Pods
	e.refresh()
	t.syncRow(e)
}

// RemoveUsage gives capacity back. Amounts never go below zero, so a removal
// that races a node's removal and re-creation does no harm.
func (t *Tree) RemoveUsage(node string, u Usage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.version++
	e, ok := t.nodes[node]
	if !ok {
		return
	}
	e.used = t.addVector(e.used, u.Resources, -1)
	for i, v := range e.used {
		e.used[i] = max(v, 0)
	}
	e.podsUsed = max(e.podsUsed-u.Pods, 0)
	e.refresh()
	t.syncRow(e)
	if !e.present && e.podsUsed == 0 && allZero(e.used) {
		delete(t.nodes, node)
	}
}

// AddAssignment records an admitted workload's pods as usage on their nodes.
func (t *Tree) AddAssignment(a *Assignment) {
	for _, n := range a.Nodes {
		t.AddUsage(n.Name, a.usageOf(n.Count))
	}
}

// RemoveAssignment gives back what AddAssignment took, when the workload is
// evicted or finishes. A pod is counted once: through its workload's
// assignment, or through AddUsage when it belongs to no admitted workload.
func (t *Tree) RemoveAssignment(a *Assignment) {
	for _, n := range a.Nodes {
		t.RemoveUsage(n.Name, a.usageOf(n.Count))
	}
}

func (t *Tree) entry(name string) *nodeEntry {
	e, ok := t.nodes[name]
	if !ok {
		e = &nodeEntry{name: name, pos: -1}
		t.nodes[name] = e
	}
	return e
}

// moveEntry sets a node's level values, moving it in the sorted nodes.
func (t *Tree) moveEntry(e *nodeEntry, values []string) {
	if e.inTopology() {
		t.unsort(e.key)
	}
	e.present = true
	e.values, e.key = values, ""
	if values != nil {
		e.key = pathKey(values, e.name)
		t.sort(e)
	}
	t.shapeChanged()
}

// sort inserts an entry into the sorted nodes.
func (t *Tree) sort(e *nodeEntry) {
	i := t.search(e.key)
	t.sorted = slices.Insert(t.sorted, i, e)
}

// unsort removes the entry with the given key from the sorted nodes.
func (t *Tree) unsort(key string) {
	if i := t.search(key); i < len(t.sorted) && t.sorted[i].key == key {
		t.sorted[i].pos = -1 // out of the layout from now on
		t.sorted = slices.Delete(t.sorted, i, i+1)
	}
}

func (t *Tree) search(key string) int {
	i, _ := slices.BinarySearchFunc(t.sorted, key, func(e *nodeEntry, k string) int { return strings.Compare(e.key, k) })
	return i
}

func (t *Tree) shapeChanged() {
	t.lay = nil
	t.rows = nil
}

// syncRow copies an entry's refreshed free capacity into the rows.
func (t *Tree) syncRow(e *nodeEntry) {
	if t.rows == nil || e.pos < 0 {
		return
	}
	if len(e.free) > t.rows.nres {
		t.rows = nil // a new resource: rebuilt at the next snapshot
		return
	}
	row := t.rows.free[int(e.pos)*t.rows.nres : int(e.pos+1)*t.rows.nres]
	clear(row[copy(row, e.free):])
	t.rows.pods[e.pos] = max(e.podCap-e.podsUsed, 0)
}

// levelValues returns the node's value for every level, or nil when a label
// is missing: such a node is outside the topology.
func (t *Tree) levelValues(labels map[string]string) []string {
	values := make([]string, len(t.levels))
	for i, l := range t.levels {
		v, ok := labels[l]
		if !ok || v == "" {
			return nil
		}
		values[i] = v
	}
	return values
}

// pathKey orders nodes so that every domain is a contiguous run of nodes.
func pathKey(values []string, name string) string {
	return strings.Join(values, "\x00") + "\x00" + name
}

func equalValues(a, b []string) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func allZero(v []int64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
