package topology

import (
	"slices"
	"sync"
)

// layout is the immutable shape of the topology that snapshots share: the
// nodes sorted by their label values path, so every domain at every level
// is a contiguous run of nodes and its children a contiguous run of domains
// one level down. Ranges use a sentinel entry at the end of each array, so
// the range of domain j is [a[j], a[j+1]).
type layout struct {
	levels     []string
	names      []string // node names in layout order
	entries    []*nodeEntry
	byName     map[string]int32 // built on first use by index
	byNameOnce sync.Once

	value  [][]string // value[l][j]: the label value of domain j at level l
	parent [][]int32  // parent[l][j]: its parent's index at level l-1
	// child[l][j]: first index at level l+1 of domain j's children, where
	// level len(levels) is the nodes; len count(l)+1.
	child [][]int32
	// nodeLo[l][j]: first node of domain j at level l; len count(l)+1.
	nodeLo [][]int32
	leaf   []int32 // leaf[i]: node i's domain at the last level
}

// nodeLevel is the pseudo level of the nodes themselves.
func (y *layout) nodeLevel() int { return len(y.levels) }

// count returns the number of domains at level l (nodes at nodeLevel).
func (y *layout) count(l int) int {
	if l == y.nodeLevel() {
		return len(y.names)
	}
	return len(y.value[l])
}

// descend maps a range of domains at level l to the range of their
// descendants at level m >= l.
func (y *layout) descend(l, lo, hi, m int) (int, int) {
	for k := l; k < m; k++ {
		lo, hi = int(y.child[k][lo]), int(y.child[k][hi])
	}
	return lo, hi
}

// nodes returns the node range of domain j at level l.
func (y *layout) nodes(l, j int) (int, int) {
	if l == y.nodeLevel() {
		return j, j + 1
	}
	return int(y.nodeLo[l][j]), int(y.nodeLo[l][j+1])
}

// path returns the label values naming domain j at level l.
func (y *layout) path(l, j int) []string {
	p := make([]string, l+1)
	for k := l; k >= 0; k-- {
		p[k] = y.value[k][j]
		j = int(y.parent[k][j])
	}
	return p
}

// appendPath appends the label values naming domain j at level l to dst.
func (y *layout) appendPath(dst []string, l, j int) []string {
	n := len(dst)
	dst = append(dst, make([]string, l+1)...)
	for k := l; k >= 0; k-- {
		dst[n+k] = y.value[k][j]
		j = int(y.parent[k][j])
	}
	return dst
}

// buildLayout derives the domains from the nodes sorted by path key, in
// one pass.
func buildLayout(levels []string, sorted []*nodeEntry) *layout {
	L := len(levels)
	y := &layout{
		levels:  levels,
		names:   make([]string, len(sorted)),
		entries: slices.Clone(sorted),
		value:   make([][]string, L),
		parent:  make([][]int32, L),
		child:   make([][]int32, L),
		nodeLo:  make([][]int32, L),
		leaf:    make([]int32, len(sorted)),
	}
	for l, n := range domainCounts(sorted, L) {
		y.value[l] = make([]string, 0, n)
		y.parent[l] = make([]int32, 0, n)
		y.child[l] = make([]int32, 0, n+1)
		y.nodeLo[l] = make([]int32, 0, n+1)
	}
	var prev []string
	for i, e := range y.entries {
		y.names[i] = e.name
		e.pos = int32(i)
		y.addNode(i, prev, e.values)
		prev = e.values
		y.leaf[i] = int32(len(y.value[L-1]) - 1)
	}
	y.closeRanges()
	return y
}

// index returns a node's position, building the name index on first use:
// only lookups by name need it, not placement.
func (y *layout) index(name string) (int32, bool) {
	y.byNameOnce.Do(func() {
		y.byName = make(map[string]int32, len(y.names))
		for i, n := range y.names {
			y.byName[n] = int32(i)
		}
	})
	i, ok := y.byName[name]
	return i, ok
}

// domainCounts counts the domains per level, to allocate the arrays once.
func domainCounts(sorted []*nodeEntry, L int) []int {
	counts := make([]int, L)
	var prev []string
	for _, e := range sorted {
		for l := firstDiff(prev, e.values); l < L; l++ {
			counts[l]++
		}
		prev = e.values
	}
	return counts
}

// firstDiff returns the first level where two paths differ (0 without a
// previous path).
func firstDiff(prev, values []string) int {
	if prev == nil {
		return 0
	}
	l := 0
	for l < len(values) && prev[l] == values[l] {
		l++
	}
	return l
}

// addNode opens new domains from the first level where node i's path
// differs from the previous node's.
func (y *layout) addNode(i int, prev, values []string) {
	L := len(values)
	for l := firstDiff(prev, values); l < L; l++ {
		y.value[l] = append(y.value[l], values[l])
		y.nodeLo[l] = append(y.nodeLo[l], int32(i))
		if l > 0 {
			y.parent[l] = append(y.parent[l], int32(len(y.value[l-1])-1))
		} else {
			y.parent[l] = append(y.parent[l], -1)
		}
		if l+1 < L {
			y.child[l] = append(y.child[l], int32(len(y.value[l+1])))
		} else {
			y.child[l] = append(y.child[l], int32(i))
		}
	}
}

// closeRanges appends the sentinels.
func (y *layout) closeRanges() {
	L := len(y.levels)
	for l := range L {
		y.nodeLo[l] = append(y.nodeLo[l], int32(len(y.names)))
		if l+1 < L {
			y.child[l] = append(y.child[l], int32(len(y.value[l+1])))
		} else {
			y.child[l] = append(y.child[l], int32(len(y.names)))
		}
	}
}

// leafAt returns the domain at level l holding node i.
func (y *layout) leafAt(l, i int) int {
	j := int(y.leaf[i])
	for k := len(y.levels) - 1; k > l; k-- {
		j = int(y.parent[k][j])
	}
	return j
}
