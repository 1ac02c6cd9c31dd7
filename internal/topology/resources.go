package topology

// resourceIndex interns resource names, so free capacity lives in flat
// int64 arrays rather than maps. It is immutable once published: a new
// resource name makes a new index, so snapshots can share the old one.
type resourceIndex struct {
	names []string
	index map[string]int
}

// lookup returns a resource's position, or -1 when no node has it.
func (r *resourceIndex) lookup(name string) int {
	if i, ok := r.index[name]; ok {
		return i
	}
	return -1
}

// intern returns a resource's position, adding it if new.
func (t *Tree) intern(name string) int {
	if i, ok := t.res.index[name]; ok {
		return i
	}
	next := &resourceIndex{names: append(append([]string(nil), t.res.names...), name), index: make(map[string]int, len(t.res.index)+1)}
	for k, v := range t.res.index {
		next.index[k] = v
	}
	next.index[name] = len(t.res.names)
	t.res = next
	return next.index[name]
}

// vector converts amounts to a flat vector (reusing dst).
func (t *Tree) vector(r Resources, dst []int64) []int64 {
	for name, v := range r {
		i := t.intern(name)
		dst = grow(dst, i+1)
		dst[i] = v
	}
	return dst
}

// addVector adds sign×r to v.
func (t *Tree) addVector(v []int64, r Resources, sign int64) []int64 {
	for name, amount := range r {
		i := t.intern(name)
		v = grow(v, i+1)
		v[i] += sign * amount
	}
	return v
}

// grow extends v with zeros to at least n entries.
func grow(v []int64, n int) []int64 {
	for len(v) < n {
		v = append(v, 0)
	}
	return v
}

// at reads a vector entry, absent entries being zero.
func at(v []int64, i int) int64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}
