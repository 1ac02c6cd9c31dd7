package topology

import (
	"strings"
	"testing"
)

func TestNewValidatesLevels(t *testing.T) {
	cases := []struct {
		name   string
		levels []string
		err    string
	}{
		{"none", nil, "1 to 8 levels"},
		{"nine", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, "1 to 8 levels"},
		{"empty key", []string{"a", ""}, "empty label key"},
		{"twice", []string{"a", "a"}, "twice"},
		{"hostname not last", []string{HostnameLabel, rack}, "only be the last"},
		{"ok", threeLevels, ""},
		{"hostname only", []string{HostnameLabel}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.levels)
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("New(%v) = %v, want error containing %q", c.levels, err, c.err)
			}
		})
	}
}

func TestSnapshotFreeAfterEvents(t *testing.T) {
	tr := newTree(t, gpuHost("b1", "r1", 8))
	tr.AddUsage("r1-0", Usage{Resources: Resources{gpu: 3, cpu: 1000}, Pods: 2})
	free, pods, ok := tr.Snapshot().Free("r1-0")
	if !ok || free[gpu] != 5 || free[cpu] != 63000 || pods != 108 {
		t.Fatalf("free = %v, %d pods, %v; want 5 GPUs, 63000m cpu, 108 pods", free, pods, ok)
	}
	tr.RemoveUsage("r1-0", Usage{Resources: Resources{gpu: 5}, Pods: 5})
	free, pods, _ = tr.Snapshot().Free("r1-0")
	if free[gpu] != 8 || pods != 110 {
		t.Fatalf("after over-removal free = %v, %d pods; want usage clamped at zero", free, pods)
	}
}

func TestUsageBeforeNode(t *testing.T) {
	tr := newTree(t)
	tr.AddUsage("r1-0", Usage{Resources: Resources{gpu: 2}, Pods: 1})
	if n := tr.Snapshot().Nodes(); n != 0 {
		t.Fatalf("a node with usage only is in the topology: %d nodes", n)
	}
	tr.SetNode(Node{Name: "r1-0", Labels: map[string]string{block: "b1", rack: "r1", HostnameLabel: "r1-0"}, Allocatable: Resources{gpu: 8}, Pods: 10})
	if free, pods, _ := tr.Snapshot().Free("r1-0"); free[gpu] != 6 || pods != 9 {
		t.Fatalf("free = %v, %d pods; want the earlier usage counted", free, pods)
	}
}

func TestNodesOutsideTheTopology(t *testing.T) {
	tr := newTree(t, gpuHost("b1", "r1", 8))
	tr.SetNode(Node{Name: "bare", Labels: map[string]string{block: "b1"}, Allocatable: Resources{gpu: 8}, Pods: 10})
	if _, _, ok := tr.Snapshot().Free("bare"); ok {
		t.Fatal("a node without the rack label is offered")
	}
}

func TestRelabelAndRemove(t *testing.T) {
	tr := newTree(t, gpuHost("b1", "r1", 8), gpuHost("b1", "r2", 8))
	tr.SetNode(Node{Name: "r1-0", Labels: map[string]string{block: "b1", rack: "r2", HostnameLabel: "r1-0"}, Allocatable: Resources{gpu: 8}, Pods: 10})
	a, err := tr.Snapshot().Place(gpuPods("w", 16, Required, rack))
	if err != nil {
		t.Fatalf("16 GPUs in r2 after relabelling: %v", err)
	}
	if got := perDomain(a, 1); got["r2"] != 16 {
		t.Fatalf("per rack = %v, want 16 in r2", got)
	}
	tr.RemoveNode("r1-0")
	if _, err := tr.Snapshot().Place(gpuPods("w", 16, Required, rack)); err == nil {
		t.Fatal("placed on a removed node")
	}
	tr.RemoveUsage("r1-0", Usage{Pods: 1}) // ignored
	if n := tr.Snapshot().Nodes(); n != 1 {
		t.Fatalf("%d nodes, want 1", n)
	}
}

func TestSnapshotIsolatedFromEvents(t *testing.T) {
	tr := newTree(t, gpuHost("b1", "r1", 8))
	s := tr.Snapshot()
	v := tr.Version()
	tr.AddUsage("r1-0", Usage{Resources: Resources{gpu: 8}})
	tr.SetNode(Node{Name: "new", Labels: map[string]string{block: "b1", rack: "r1", HostnameLabel: "new"}, Allocatable: Resources{gpu: 8}, Pods: 10})
	if tr.Version() != v+2 {
		t.Fatalf("version %d, want %d", tr.Version(), v+2)
	}
	if free, _, _ := s.Free("r1-0"); free[gpu] != 8 || s.Nodes() != 1 {
		t.Fatalf("snapshot changed by later events: %v, %d nodes", free, s.Nodes())
	}
}

func TestLayoutReusedWhileShapeUnchanged(t *testing.T) {
	tr := newTree(t, gpuHost("b1", "r1", 8), gpuHost("b1", "r2", 8))
	s1 := tr.Snapshot()
	tr.AddUsage("r1-0", Usage{Resources: Resources{gpu: 1}})
	tr.SetNode(Node{Name: "r1-0", Labels: map[string]string{block: "b1", rack: "r1", HostnameLabel: "r1-0"}, Allocatable: Resources{gpu: 4}, Pods: 10})
	s2 := tr.Snapshot()
	if s1.lay != s2.lay {
		t.Fatal("usage and capacity updates rebuilt the layout")
	}
	tr.RemoveNode("r2-0")
	if s3 := tr.Snapshot(); s3.lay == s2.lay {
		t.Fatal("removing a node kept the old layout")
	}
}

func TestAddAssignmentTakesUsage(t *testing.T) {
	tr := newTree(t, gpuHost("b1", "r1", 8))
	a, err := tr.Snapshot().Place(gpuPods("w", 6, Required, rack))
	if err != nil {
		t.Fatal(err)
	}
	tr.AddAssignment(a)
	if free, pods, _ := tr.Snapshot().Free("r1-0"); free[gpu] != 2 || pods != 104 {
		t.Fatalf("free = %v, %d pods after the assignment, want 2 GPUs, 104 pods", free, pods)
	}
	tr.RemoveAssignment(a)
	if free, _, _ := tr.Snapshot().Free("r1-0"); free[gpu] != 8 {
		t.Fatalf("free = %v after removing it, want 8 GPUs", free)
	}
}

func TestNewResourceAfterSnapshot(t *testing.T) {
	tr := newTree(t, gpuHost("b1", "r1", 8))
	tr.Snapshot()
	// Usage of a resource first seen on a node outside the topology.
	tr.AddUsage("elsewhere", Usage{Resources: Resources{"example.com/fpga": 1}})
	if _, err := tr.Snapshot().Place(&PodSet{Name: "w", Count: 1, Request: Resources{"example.com/fpga": 1}}); err == nil {
		t.Fatal("placed a pod needing a resource no node in the topology has")
	}
	tr.SetNode(Node{Name: "r1-0", Labels: map[string]string{block: "b1", rack: "r1", HostnameLabel: "r1-0"}, Allocatable: Resources{gpu: 8, "example.com/fpga": 2}, Pods: 10})
	a, err := tr.Snapshot().Place(&PodSet{Name: "w", Count: 2, Request: Resources{"example.com/fpga": 1, gpu: 1}, Mode: Required, Level: HostnameLabel})
	if err != nil || a.Nodes[0].Name != "r1-0" {
		t.Fatalf("Place = %+v, %v; want both pods on r1-0", a, err)
	}
}
