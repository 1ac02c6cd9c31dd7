package topology

import "sort"

// layout is the immutable shape of the topology that snapshots share: the
// nodes sorted by their label values path, so every domain at every level
// is a contiguous run of nodes and its children a contiguous run of domains
// one level down. Ranges use a sentinel entry at the end of each array, so
// the range of domain j is [a[j], a[j+1]).
type layout struct {
	levels  []string
	names   []string // node names in layout order
	entries []*nodeEntry
	byName  map[string]int32

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

// buildLayout sorts the nodes in the topology and derives the domains.
func buildLayout(levels []string, all map[string]*nodeEntry) *layout {
	type keyed struct {
		key string
		e   *nodeEntry
	}
	var sorted []keyed
	for _, e := range all {
		e.pos = -1
		if e.present && e.values != nil {
			sorted = append(sorted, keyed{e.key, e})
		}
	}
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].key < sorted[b].key })

	L := len(levels)
	y := &layout{
		levels: levels,
		names:  make([]string, len(sorted)),
		byName: make(map[string]int32, len(sorted)),
		value:  make([][]string, L),
		parent: make([][]int32, L),
		child:  make([][]int32, L),
		nodeLo: make([][]int32, L),
		leaf:   make([]int32, len(sorted)),
	}
	y.entries = make([]*nodeEntry, len(sorted))
	var prev []string
	for i, k := range sorted {
		y.names[i], y.entries[i], y.byName[k.e.name] = k.e.name, k.e, int32(i)
		k.e.pos = int32(i)
		y.addNode(i, prev, k.e.values)
		prev = k.e.values
		y.leaf[i] = int32(len(y.value[L-1]) - 1)
	}
	y.closeRanges()
	return y
}

// addNode opens new domains from the first level where node i's path
// differs from the previous node's.
func (y *layout) addNode(i int, prev, values []string) {
	L := len(values)
	first := 0
	for first < L && prev != nil && prev[first] == values[first] {
		first++
	}
	for l := first; l < L; l++ {
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
