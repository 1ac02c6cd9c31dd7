package topology

import (
	"fmt"
	"testing"
)

const (
	gpu   = "nvidia.com/gpu"
	cpu   = "cpu"
	block = "example.com/block"
	rack  = "example.com/rack"
)

var threeLevels = []string{block, rack, HostnameLabel}

// host is one node of a test cluster: free GPUs and milli-cpus, pod slots.
type host struct {
	block, rack string
	gpus, cpu   int64
	pods        int64
}

// gpuHost is a node with the given free GPUs, ample cpu and pod slots.
func gpuHost(b, r string, gpus int64) host {
	return host{block: b, rack: r, gpus: gpus, cpu: 64000, pods: 110}
}

// newTree builds a three-level tree; node names are rack-index.
func newTree(t testing.TB, hosts ...host) *Tree {
	t.Helper()
	tr, err := New(threeLevels)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, h := range hosts {
		name := fmt.Sprintf("%s-%d", h.rack, count[h.rack])
		count[h.rack]++
		tr.SetNode(Node{
			Name:        name,
			Labels:      map[string]string{block: h.block, rack: h.rack, HostnameLabel: name},
			Allocatable: Resources{gpu: h.gpus, cpu: h.cpu},
			Pods:        h.pods,
		})
	}
	return tr
}

// rackHosts returns n nodes with the given free GPUs each in one rack.
func rackHosts(b, r string, n int, gpus int64) []host {
	hs := make([]host, n)
	for i := range hs {
		hs[i] = gpuHost(b, r, gpus)
	}
	return hs
}

func concat(groups ...[]host) []host {
	var all []host
	for _, g := range groups {
		all = append(all, g...)
	}
	return all
}

// perDomain returns the pods per domain at level l (0 block, 1 rack, 2 host).
func perDomain(a *Assignment, l int) map[string]int32 {
	m := map[string]int32{}
	for _, d := range a.Domains {
		m[d.Values[l]] += d.Count
	}
	return m
}

func perNode(a *Assignment) map[string]int32 {
	m := map[string]int32{}
	for _, n := range a.Nodes {
		m[n.Name] += n.Count
	}
	return m
}

func gpuPods(name string, n int32, mode Mode, level string) *PodSet {
	return &PodSet{Name: name, Count: n, Request: Resources{gpu: 1}, Mode: mode, Level: level}
}
