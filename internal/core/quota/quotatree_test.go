package quota

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/coretest"
)

// randomTree builds a three-level tree (root, two cohorts, two queues each)
// with random nominal quotas and, on some nodes, lending limits, and
// returns it with its leaves.
func randomTree(r *rand.Rand, fr core.FlavorResource) (*TreeNode, []*TreeNode) {
	mk := func(name string, parent *TreeNode, nominal int64) *TreeNode {
		n := newNode(name, nil, 1000)
		q := core.ResourceQuota{Nominal: nominal}
		if parent != nil && r.IntN(2) == 0 {
			q.LendingLimit = ptr.To[int64](r.Int64N(nominal + 8))
		}
		n.Own[fr] = q
		if parent != nil {
			n.Parent = parent
			parent.Children = append(parent.Children, n)
		}
		return n
	}
	root := mk("root", nil, 0)
	var leaves []*TreeNode
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
	fr := core.FlavorResource{Flavor: "a100", Resource: coretest.GPU}
	for seed := range uint64(500) {
		ops := randomOps(rand.New(rand.NewPCG(seed, 7)))
		held, heldLeaves := randomTree(rand.New(rand.NewPCG(seed, 1)), fr)
		plain, plainLeaves := randomTree(rand.New(rand.NewPCG(seed, 1)), fr)
		nodes := func(root *TreeNode) []*TreeNode {
			out := append([]*TreeNode{root}, root.Children...)
			for _, c := range root.Children {
				out = append(out, c.Children...)
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
				if h.Work[fr] != p.Work[fr] || h.Borrowing(fr) != p.Borrowing(fr) || h.Share() != p.Share() {
					t.Fatalf("seed %d, step %d, %s: work %d (borrowing %t, share %d), want %d (%t, %d); ops %v",
						seed, step, h.Name, h.Work[fr], h.Borrowing(fr), h.Share(), p.Work[fr], p.Borrowing(fr), p.Share(), ops)
				}
			}
		}
		for i, h := range nodes(held) {
			if p := nodes(plain)[i]; h.Usage[fr] != p.Usage[fr] {
				t.Fatalf("seed %d, %s: usage %d after every hold was released, want %d", seed, h.Name, h.Usage[fr], p.Usage[fr])
			}
		}
	}
}
