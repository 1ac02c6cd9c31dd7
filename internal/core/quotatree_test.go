package core

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// randomTree builds a three-level tree (root, two cohorts, two queues each)
// with random nominal quotas and, on some nodes, lending limits, and
// returns it with its leaves.
func randomTree(r *rand.Rand, fr FlavorResource) (*node, []*node) {
	mk := func(name string, parent *node, nominal int64) *node {
		n := newNode(name, nil, 1000)
		q := ResourceQuota{Nominal: nominal}
		if parent != nil && r.IntN(2) == 0 {
			q.LendingLimit = ptr64(r.Int64N(nominal + 8))
		}
		n.own[fr] = q
		if parent != nil {
			n.parent = parent
			parent.children = append(parent.children, n)
		}
		return n
	}
	root := mk("root", nil, 0)
	var leaves []*node
	for i := range 2 {
		co := mk(fmt.Sprintf("co%d", i), root, r.Int64N(4))
		for j := range 2 {
			leaves = append(leaves, mk(fmt.Sprintf("q%d%d", i, j), co, r.Int64N(12)))
		}
	}
	root.computeSubtree()
	return root, leaves
}

// treeOp adds delta at a leaf: workload usage, or held room (reserve).
type treeOp struct {
	leaf    int
	delta   int64
	reserve bool
}

// randomOps are six workload additions with three holds of room among
// them, each released at a random later point.
func randomOps(r *rand.Rand) []treeOp {
	var ops []treeOp
	for range 6 {
		ops = append(ops, treeOp{leaf: r.IntN(4), delta: 1 + r.Int64N(6)})
	}
	insert := func(at int, o treeOp) { ops = append(ops[:at], append([]treeOp{o}, ops[at:]...)...) }
	for range 3 {
		h := treeOp{leaf: r.IntN(4), delta: 1 + r.Int64N(6), reserve: true}
		at := r.IntN(len(ops) + 1)
		insert(at, h)
		insert(at+1+r.IntN(len(ops)-at), treeOp{leaf: h.leaf, delta: -h.delta, reserve: true})
	}
	return ops
}

// TestWorkOrderIndependent: what workloads use at each node (node.work,
// which decides who borrows and each node's fair share) is, after every
// step, the same as in a tree that got only the workloads' usage —
// whatever order held room arrives and leaves in among them, under any
// lending limits. Released held room leaves no usage behind.
func TestWorkOrderIndependent(t *testing.T) {
	fr := FlavorResource{Flavor: "a100", Resource: gpuRes}
	for seed := range uint64(500) {
		ops := randomOps(rand.New(rand.NewPCG(seed, 7)))
		held, heldLeaves := randomTree(rand.New(rand.NewPCG(seed, 1)), fr)
		plain, plainLeaves := randomTree(rand.New(rand.NewPCG(seed, 1)), fr)
		nodes := func(root *node) []*node {
			out := append([]*node{root}, root.children...)
			for _, c := range root.children {
				out = append(out, c.children...)
			}
			return out
		}
		for step, o := range ops {
			heldLeaves[o.leaf].add(fr, o.delta, o.reserve)
			if !o.reserve {
				plainLeaves[o.leaf].add(fr, o.delta, false)
			}
			for i, h := range nodes(held) {
				p := nodes(plain)[i]
				if h.work[fr] != p.work[fr] || h.borrowing(fr) != p.borrowing(fr) || h.share() != p.share() {
					t.Fatalf("seed %d, step %d, %s: work %d (borrowing %t, share %d), want %d (%t, %d); ops %v",
						seed, step, h.name, h.work[fr], h.borrowing(fr), h.share(), p.work[fr], p.borrowing(fr), p.share(), ops)
				}
			}
		}
		for i, h := range nodes(held) {
			if p := nodes(plain)[i]; h.usage[fr] != p.usage[fr] {
				t.Fatalf("seed %d, %s: usage %d after every hold was released, want %d", seed, h.name, h.usage[fr], p.usage[fr])
			}
		}
	}
}
