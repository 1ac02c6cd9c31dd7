package topology

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchSizes are clusters of 10 racks per block, 64 nodes per rack.
var benchSizes = []int{1300, 5000, 20000}

// benchTree builds a cluster of n GPU nodes (8 GPUs, 128 cores, 110 pods),
// about half of them partly used, so racks differ in what they hold.
func benchTree(b *testing.B, n int) *Tree {
	b.Helper()
	tr, err := New(threeLevels)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		tr.SetNode(Node{
			Name:        name,
			Labels:      map[string]string{block: fmt.Sprint("block-", i/640), rack: fmt.Sprint("rack-", i/64), HostnameLabel: name},
			Allocatable: Resources{gpu: 8, cpu: 128000, "memory": 1 << 40},
			Pods:        110,
		})
		if r.IntN(2) == 0 {
			g := int64(r.IntN(9))
			tr.AddUsage(name, Usage{Resources: Resources{gpu: g, cpu: g * 12000, "memory": g << 36}, Pods: g})
		}
	}
	return tr
}

func benchPodSets() map[string][]PodSet {
	worker := Resources{gpu: 8, cpu: 96000, "memory": 1 << 39}
	return map[string][]PodSet{
		"required-rack-16x8gpu":      {{Name: "w", Count: 16, Request: worker, Mode: Required, Level: rack}},
		"preferred-rack-128x8gpu":    {{Name: "w", Count: 128, Request: worker, Mode: Preferred, Level: rack}},
		"unconstrained-256x1gpu":     {{Name: "w", Count: 256, Request: Resources{gpu: 1, cpu: 8000}}},
		"slices-block-128x4gpu-by16": {{Name: "w", Count: 128, Request: Resources{gpu: 4, cpu: 32000}, Mode: Required, Level: block, SliceLevel: rack, SliceSize: 16}},
		"filtered-required-rack-16x8gpu": {{Name: "w", Count: 16, Request: worker, Mode: Required, Level: rack,
			Fits: func(n string) bool { return len(n)%7 != 0 }}},
	}
}

// BenchmarkPlace places typical pod sets on a snapshot (no Apply).
func BenchmarkPlace(b *testing.B) {
	for _, n := range benchSizes {
		s := benchTree(b, n).Snapshot()
		for name, sets := range benchPodSets() {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := s.Place(&sets[0]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPlaceGroup places a master and 31 workers in one rack.
func BenchmarkPlaceGroup(b *testing.B) {
	sets := []PodSet{
		{Name: "master", Count: 1, Request: Resources{cpu: 4000}, Mode: Required, Level: rack},
		{Name: "workers", Count: 31, Request: Resources{gpu: 8, cpu: 96000}, Mode: Required, Level: rack},
	}
	for _, n := range benchSizes {
		s := benchTree(b, n).Snapshot()
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.PlaceGroup(sets); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSnapshot measures a cycle's copy of the free capacity when the
// shape is unchanged.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range benchSizes {
		tr := benchTree(b, n)
		tr.Snapshot()
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tr.AddUsage("node-1", Usage{Pods: 1})
				tr.Snapshot()
			}
		})
	}
}

// BenchmarkRebuildLayout measures the snapshot after a node joined.
func BenchmarkRebuildLayout(b *testing.B) {
	for _, n := range benchSizes {
		tr := benchTree(b, n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				name := fmt.Sprint("extra-", i%2)
				tr.SetNode(Node{Name: name, Labels: map[string]string{block: "block-0", rack: "rack-0", HostnameLabel: name}, Allocatable: Resources{gpu: 8}, Pods: 110})
				tr.RemoveNode(name)
				tr.Snapshot()
			}
		})
	}
}

// BenchmarkCycle is one cycle's topology work: snapshot, then place and
// apply 20 workloads of mixed shapes.
func BenchmarkCycle(b *testing.B) {
	sets := benchPodSets()
	order := []string{"required-rack-16x8gpu", "preferred-rack-128x8gpu", "unconstrained-256x1gpu", "slices-block-128x4gpu-by16"}
	for _, n := range benchSizes {
		tr := benchTree(b, n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := tr.Snapshot()
				for k := range 20 {
					if a, err := s.Place(&sets[order[k%len(order)]][0]); err == nil {
						_ = s.Apply(a)
					}
				}
			}
		})
	}
}

// BenchmarkAddUsage is the cost of one pod-bound event.
func BenchmarkAddUsage(b *testing.B) {
	tr := benchTree(b, 5000)
	u := Usage{Resources: Resources{gpu: 1, cpu: 1000}, Pods: 1}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tr.AddUsage("node-42", u)
		if i%2 == 1 {
			tr.RemoveUsage("node-42", u)
			tr.RemoveUsage("node-42", u)
		}
	}
}
