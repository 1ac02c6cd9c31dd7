package topology

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// node is a node named by the last element of its path (its label values,
// coarsest first, hostname last) with free GPUs.
type node struct {
	path string // "b1/r1/x1"
	gpus int64
}

// treeOf builds a tree of the given levels from nodes named by paths.
func treeOf(t *testing.T, levels []string, nodes ...node) *Tree {
	t.Helper()
	tr, err := New(levels)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		values := strings.Split(n.path, "/")
		labels := map[string]string{}
		for i, l := range levels {
			labels[l] = values[i]
		}
		tr.SetNode(Node{Name: values[len(values)-1], Labels: labels, Allocatable: Resources{gpu: n.gpus, cpu: 64000}, Pods: 110})
	}
	return tr
}

func balanced(n int32, level string) *PodSet {
	ps := gpuPods("w", n, Preferred, level)
	ps.Balanced = true
	return ps
}

func sliced(ps *PodSet, level string, size int32) *PodSet {
	ps.SliceLevel, ps.SliceSize = level, size
	return ps
}

const subblock = "example.com/subblock"

// TestPlaceBalanced: Kueue's balanced placement scenarios (its TAS cache
// tests, v0.19), pods per node; one GPU per pod.
func TestPlaceBalanced(t *testing.T) {
	four := []string{block, subblock, rack, HostnameLabel}
	sb := []node{{"b1/sb1/r1/x1", 18}, {"b1/sb1/r2/x2", 8}, {"b1/sb2/r3/x3", 15}, {"b1/sb2/r4/x4", 9}, {"b1/sb2/r4/x5", 7}}
	cases := []struct {
		name   string
		levels []string
		nodes  []node
		ps     *PodSet
		want   map[string]int32
	}{
		{name: "even over two hosts, the extra pod to the first",
			nodes: []node{{"b1/r1/x1", 15}, {"b1/r2/x2", 15}}, ps: balanced(25, rack),
			want: map[string]int32{"x1": 13, "x2": 12}},
		{name: "a host below the threshold is left out",
			nodes: []node{{"b1/r1/x1", 15}, {"b1/r1/x2", 13}, {"b1/r1/x3", 10}}, ps: balanced(23, rack),
			want: map[string]int32{"x1": 12, "x2": 11}},
		{name: "with slices, the hosts that hold the set with the least to spare",
			nodes: []node{{"b1/r1/x1", 20}, {"b1/r1/x2", 15}, {"b1/r1/x3", 10}}, ps: sliced(balanced(25, rack), HostnameLabel, 5),
			want: map[string]int32{"x2": 15, "x3": 10}},
		{name: "the block with the higher threshold",
			nodes: []node{{"b1/r1/x1", 20}, {"b1/r1/x2", 10}, {"b2/r2/x3", 15}, {"b2/r2/x4", 15}}, ps: balanced(22, rack),
			want: map[string]int32{"x3": 11, "x4": 11}},
		{name: "never two blocks; extras to the largest",
			nodes: []node{{"b1/r1/x1", 14}, {"b1/r1/x2", 11}, {"b2/r2/x3", 15}, {"b2/r2/x4", 10}}, ps: balanced(25, rack),
			want: map[string]int32{"x1": 14, "x2": 11}},
		{name: "balanced at the last level, within one rack",
			nodes: []node{{"b1/r1/x1", 20}, {"b1/r1/x2", 8}, {"b1/r2/x3", 15}, {"b1/r2/x4", 13}, {"b1/r2/x5", 10}}, ps: balanced(22, HostnameLabel),
			want: map[string]int32{"x3": 11, "x4": 11}},
		{name: "at the last level with host slices",
			nodes: []node{{"b1/r1/x1", 15}, {"b1/r1/x2", 13}, {"b1/r1/x3", 10}, {"b1/r2/x4", 20}, {"b1/r2/x5", 8}},
			ps:    sliced(balanced(22, HostnameLabel), HostnameLabel, 2),
			want:  map[string]int32{"x2": 12, "x3": 10}},
		{name: "four levels, host slices",
			levels: four, nodes: sb, ps: sliced(balanced(20, subblock), HostnameLabel, 2),
			want: map[string]int32{"x3": 10, "x4": 8, "x5": 2}},
		// Kueue gives x4:3 x5:7 here: below the slice level it fills the
		// smallest node first; Muster takes the fewest nodes.
		{name: "four levels, rack slices: the fewest nodes inside a rack",
			levels: four, nodes: sb, ps: sliced(balanced(20, subblock), rack, 2),
			want: map[string]int32{"x3": 10, "x4": 9, "x5": 1}},
		{name: "of two racks alike, the one that splits evenly",
			nodes: []node{{"b1/r1/x1", 10}, {"b1/r1/x2", 5}, {"b1/r2/x3", 5}, {"b1/r2/x4", 5}, {"b1/r2/x5", 5}}, ps: balanced(15, rack),
			want: map[string]int32{"x3": 5, "x4": 5, "x5": 5}},
		{name: "evenness again, the first rack",
			nodes: []node{{"b1/r1/x1", 8}, {"b1/r1/x2", 8}, {"b1/r1/x3", 8}, {"b1/r2/x4", 16}, {"b1/r2/x5", 8}}, ps: balanced(24, rack),
			want: map[string]int32{"x1": 8, "x2": 8, "x3": 8}},
		{name: "equal thresholds: the block needing fewer racks",
			nodes: []node{{"b1/r1/x1", 5}, {"b1/r1/x2", 5}, {"b1/r2/x3", 5}, {"b1/r2/x4", 5},
				{"b2/r3/x5", 10}, {"b2/r3/x6", 4}, {"b2/r3/x7", 4}, {"b2/r3/x8", 4}, {"b2/r4/x9", 5}, {"b2/r5/x10", 5}},
			ps:   balanced(20, rack),
			want: map[string]int32{"x1": 5, "x2": 5, "x3": 5, "x4": 5}},
		{name: "two levels: racks of the whole topology",
			levels: []string{rack, HostnameLabel},
			nodes:  []node{{"r1/x1", 21}, {"r1/x2", 9}, {"r2/x3", 11}, {"r2/x4", 10}, {"r2/x5", 10}}, ps: balanced(23, rack),
			want: map[string]int32{"x1": 12, "x3": 11}},
		{name: "no block holds it: placed as preferred, over blocks",
			nodes: []node{{"b1/r1/x1", 6}, {"b2/r2/x2", 6}}, ps: balanced(10, rack),
			want: map[string]int32{"x1": 6, "x2": 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			levels := tc.levels
			if levels == nil {
				levels = threeLevels
			}
			a, err := treeOf(t, levels, tc.nodes...).Snapshot().Place(tc.ps)
			if err != nil {
				t.Fatal(err)
			}
			if got := perNode(a); !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPlaceBalancedOnlyWhenAsked: the same set without Balanced is placed
// as Preferred (Kueue without TASBalancedPlacement): tightest first.
func TestPlaceBalancedOnlyWhenAsked(t *testing.T) {
	tr := treeOf(t, threeLevels, node{"b1/r1/x1", 15}, node{"b1/r2/x2", 15})
	a, err := tr.Snapshot().Place(gpuPods("w", 25, Preferred, rack))
	if err != nil {
		t.Fatal(err)
	}
	if got := perNode(a); got["x1"] != 15 || got["x2"] != 10 {
		t.Errorf("got %v, want x1:15 x2:10", got)
	}
}

// TestLeastSubset: the m domains holding the least that still holds the
// need, the first such in order; the table and the large fallback.
func TestLeastSubset(t *testing.T) {
	d := func(pods ...int64) []bdom {
		out := make([]bdom, len(pods))
		for i, p := range pods {
			out[i] = bdom{j: i, slices: p, pods: p}
		}
		return out
	}
	js := func(ds []bdom) []int {
		var out []int
		for _, x := range ds {
			out = append(out, x.j)
		}
		return out
	}
	for _, tc := range []struct {
		doms []bdom
		m    int
		need int64
		want []int
	}{
		{d(18, 18, 18, 10, 2), 2, 20, []int{0, 4}},
		{d(15, 13, 10), 2, 23, []int{1, 2}},
		{d(20, 15, 10), 2, 25, []int{1, 2}},
		{d(5, 5, 5), 2, 10, []int{0, 1}},
		{d(3, 3), 2, 10, nil},
		{d(100, 100), 2, 10, []int{0, 1}},
		{d(30, 12, 40, 12, 11), 1, 12, []int{1}},
		{d(30, 12, 40), 1, 41, nil},
		{d(5, 9, 7), 1, 0, []int{0}},
	} {
		if got := js(leastSubset(tc.doms, tc.m, tc.need)); !slices.Equal(got, tc.want) {
			t.Errorf("%v m=%d need=%d: got %v, want %v", js(tc.doms), tc.m, tc.need, got, tc.want)
		}
	}
}

// TestLeastSubsetBeyondItsTable: a topology too large for the table gets
// the m domains holding the most, or nothing when even they fall short;
// one domain too.
func TestLeastSubsetBeyondItsTable(t *testing.T) {
	doms := make([]bdom, 400)
	for i := range doms {
		doms[i] = bdom{j: i, slices: int64(100 + i%7), pods: int64(100 + i%7)}
	}
	got := leastSubset(doms, 3, 300)
	if len(got) != 3 {
		t.Fatalf("got %d domains, want 3", len(got))
	}
	for _, d := range got {
		if d.pods != 106 {
			t.Errorf("took a domain of %d pods, want the largest (106)", d.pods)
		}
	}
	if leastSubset(doms, 3, 400) != nil {
		t.Error("three domains of at most 106 pods cannot hold 400")
	}
	if one := leastSubset(doms, 1, 50); len(one) != 1 || one[0].pods != 106 {
		t.Errorf("one domain beyond the table: got %+v, want the largest (106 pods), as for several", one)
	}
}

// TestLeastSubsetOfOneMatchesTheTable: the single-domain path answers what
// the table answers for m = 1 (the same domain, the first of the least
// that holds need), so the table is built only for sets of several.
func TestLeastSubsetOfOneMatchesTheTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for range 500 {
		doms := make([]bdom, 1+rng.IntN(12))
		for i := range doms {
			p := rng.Int64N(20)
			doms[i] = bdom{j: i, slices: p, pods: p}
		}
		need := rng.Int64N(25)
		var total int64
		for _, d := range doms {
			total += d.pods
		}
		if total < need {
			continue
		}
		got, want := leastOne(doms, need), subsetTable(doms, 1, need, int(total/64)+1)
		if len(got) != len(want) || (len(got) == 1 && got[0].j != want[0].j) {
			t.Fatalf("%+v need %d: got %+v, table %+v", doms, need, got, want)
		}
	}
}
