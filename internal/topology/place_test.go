package topology

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
)

func TestPlace(t *testing.T) {
	cases := []struct {
		name  string
		hosts []host
		ps    *PodSet
		// want pods per domain at wantLevel (0 block, 1 rack, 2 host);
		// nil wants a NoFit.
		wantLevel int
		want      map[string]int32
	}{
		{
			name:  "fragmented 2+2 free GPUs never fit a 4-GPU pod",
			hosts: []host{gpuHost("b1", "r1", 2), gpuHost("b1", "r1", 2)},
			ps:    &PodSet{Name: "big", Count: 1, Request: Resources{gpu: 4}},
		},
		{
			name:  "required rack picks the tightest rack",
			hosts: concat(rackHosts("b1", "r1", 2, 4), rackHosts("b1", "r2", 1, 4), rackHosts("b2", "r3", 2, 3)),
			ps:    gpuPods("w", 4, Required, rack),
			want:  map[string]int32{"r2": 4}, wantLevel: 1,
		},
		{
			name:  "required rack is not spread over racks",
			hosts: concat(rackHosts("b1", "r1", 1, 3), rackHosts("b1", "r2", 1, 3)),
			ps:    gpuPods("w", 4, Required, rack),
		},
		{
			name:  "required block packs the fewest racks inside",
			hosts: concat(rackHosts("b1", "r1", 1, 6), rackHosts("b1", "r2", 1, 2), rackHosts("b1", "r3", 1, 3)),
			ps:    gpuPods("w", 8, Required, block),
			want:  map[string]int32{"r1": 6, "r2": 2}, wantLevel: 1,
		},
		{
			name:  "preferred rack stays in one rack when one holds it",
			hosts: concat(rackHosts("b1", "r1", 1, 8), rackHosts("b1", "r2", 1, 4)),
			ps:    gpuPods("w", 4, Preferred, rack),
			want:  map[string]int32{"r2": 4}, wantLevel: 1,
		},
		{
			name:  "preferred rack spills to the fewest racks, the last best fit",
			hosts: concat(rackHosts("b1", "r1", 1, 4), rackHosts("b1", "r2", 1, 3), rackHosts("b1", "r3", 1, 2), rackHosts("b1", "r4", 1, 2)),
			ps:    gpuPods("w", 6, Preferred, rack),
			want:  map[string]int32{"r1": 4, "r3": 2}, wantLevel: 1,
		},
		{
			name:  "preferred rack climbs to the tightest block",
			hosts: concat(rackHosts("b1", "r1", 1, 4), rackHosts("b1", "r2", 1, 4), rackHosts("b2", "r3", 1, 3), rackHosts("b2", "r4", 1, 3)),
			ps:    gpuPods("w", 6, Preferred, rack),
			want:  map[string]int32{"b2": 6}, wantLevel: 0,
		},
		{
			name:  "preferred spreads over blocks when no block holds it",
			hosts: concat(rackHosts("b1", "r1", 1, 4), rackHosts("b2", "r2", 1, 4), rackHosts("b3", "r3", 1, 1)),
			ps:    gpuPods("w", 6, Preferred, rack),
			want:  map[string]int32{"b1": 4, "b2": 2}, wantLevel: 0,
		},
		{
			name:  "preferred without enough capacity anywhere",
			hosts: concat(rackHosts("b1", "r1", 1, 4), rackHosts("b2", "r2", 1, 1)),
			ps:    gpuPods("w", 6, Preferred, rack),
		},
		{
			name:  "unconstrained takes the least free node that holds it all",
			hosts: []host{gpuHost("b1", "r1", 8), gpuHost("b1", "r1", 1), gpuHost("b1", "r1", 3)},
			ps:    gpuPods("w", 3, Unconstrained, ""),
			want:  map[string]int32{"r1-2": 3}, wantLevel: 2,
		},
		{
			name:  "unconstrained fills the least free nodes first when no node holds it",
			hosts: []host{gpuHost("b1", "r1", 8), gpuHost("b1", "r1", 1), gpuHost("b1", "r1", 3)},
			ps:    gpuPods("w", 10, Unconstrained, ""),
			want:  map[string]int32{"r1-0": 6, "r1-1": 1, "r1-2": 3}, wantLevel: 2,
		},
		{
			name:  "unconstrained takes the least free rack that holds it all",
			hosts: concat(rackHosts("b1", "r1", 2, 4), rackHosts("b1", "r2", 2, 3), rackHosts("b2", "r3", 3, 4)),
			ps:    gpuPods("w", 6, Unconstrained, ""),
			want:  map[string]int32{"r2": 6}, wantLevel: 1,
		},
		{
			name:  "required hostname picks the tightest node",
			hosts: []host{gpuHost("b1", "r1", 8), gpuHost("b1", "r1", 4), gpuHost("b1", "r2", 6)},
			ps:    gpuPods("w", 4, Required, HostnameLabel),
			want:  map[string]int32{"r1-1": 4}, wantLevel: 2,
		},
		{
			name:  "slices land whole in their racks",
			hosts: concat(rackHosts("b1", "r1", 1, 5), rackHosts("b1", "r2", 1, 5), rackHosts("b1", "r3", 1, 3)),
			ps:    &PodSet{Name: "w", Count: 8, Request: Resources{gpu: 1}, Mode: Required, Level: block, SliceLevel: rack, SliceSize: 4},
			want:  map[string]int32{"r1": 4, "r2": 4}, wantLevel: 1,
		},
		{
			name:  "slices do not fit in rack remainders",
			hosts: concat(rackHosts("b1", "r1", 1, 6), rackHosts("b1", "r2", 1, 3), rackHosts("b1", "r3", 1, 3)),
			ps:    &PodSet{Name: "w", Count: 8, Request: Resources{gpu: 1}, Mode: Required, Level: block, SliceLevel: rack, SliceSize: 4},
		},
		{
			name:  "unconstrained slices use the racks holding the fewest slices first",
			hosts: concat(rackHosts("b1", "r1", 1, 8), rackHosts("b1", "r2", 1, 5), rackHosts("b1", "r3", 1, 3)),
			ps:    &PodSet{Name: "w", Count: 4, Request: Resources{gpu: 1}, SliceLevel: rack, SliceSize: 4},
			want:  map[string]int32{"r2": 4}, wantLevel: 1,
		},
		{
			name: "the pod cap limits pods per node",
			hosts: []host{
				{block: "b1", rack: "r1", gpus: 8, cpu: 64000, pods: 2},
				{block: "b1", rack: "r1", gpus: 8, cpu: 64000, pods: 2},
			},
			ps:   gpuPods("w", 4, Required, rack),
			want: map[string]int32{"r1-0": 2, "r1-1": 2}, wantLevel: 2,
		},
		{
			name:  "the pod cap makes a rack too small",
			hosts: []host{{block: "b1", rack: "r1", gpus: 8, cpu: 64000, pods: 3}},
			ps:    gpuPods("w", 4, Required, rack),
		},
		{
			name: "the scarcest resource bounds the pods per node",
			hosts: []host{
				{block: "b1", rack: "r1", gpus: 8, cpu: 4000, pods: 110},
				{block: "b1", rack: "r1", gpus: 1, cpu: 64000, pods: 110},
				{block: "b1", rack: "r1", gpus: 8, cpu: 2000, pods: 110},
			},
			ps:   &PodSet{Name: "w", Count: 4, Request: Resources{gpu: 1, cpu: 2000}, Mode: Required, Level: rack},
			want: map[string]int32{"r1-0": 2, "r1-1": 1, "r1-2": 1}, wantLevel: 2,
		},
		{
			name:  "a resource no node has never fits",
			hosts: []host{gpuHost("b1", "r1", 8)},
			ps:    &PodSet{Name: "w", Count: 1, Request: Resources{"example.com/fpga": 1}},
		},
		{
			name:  "unschedulable nodes are filtered out",
			hosts: concat(rackHosts("b1", "r1", 1, 4), rackHosts("b1", "r2", 2, 4)),
			ps: &PodSet{Name: "w", Count: 4, Request: Resources{gpu: 1}, Mode: Required, Level: rack,
				Fits: func(n string) bool { return n != "r1-0" }},
			want: map[string]int32{"r2": 4}, wantLevel: 1,
		},
		{
			name:  "a filter can leave nothing",
			hosts: rackHosts("b1", "r1", 2, 4),
			ps:    &PodSet{Name: "w", Count: 1, Request: Resources{gpu: 1}, Fits: func(string) bool { return false }},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := newTree(t, c.hosts...).Snapshot().Place(c.ps)
			if c.want == nil {
				var nf *NoFit
				if !errors.As(err, &nf) {
					t.Fatalf("Place = %+v, %v; want a NoFit", a, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Place: %v", err)
			}
			if got := perDomain(a, c.wantLevel); !maps.Equal(got, c.want) {
				t.Fatalf("pods per domain = %v, want %v", got, c.want)
			}
		})
	}
}

func TestNoFitNamesTheBestDomain(t *testing.T) {
	hosts := concat(rackHosts("b1", "rack-1", 2, 8), rackHosts("b1", "rack-2", 3, 8), rackHosts("b1", "rack-3", 1, 8))
	_, err := newTree(t, hosts...).Snapshot().Place(&PodSet{Name: "workers", Count: 4, Request: Resources{gpu: 8}, Mode: Required, Level: rack})
	var nf *NoFit
	if !errors.As(err, &nf) {
		t.Fatalf("err = %v, want a NoFit", err)
	}
	if nf.Best == nil || nf.Best.Values[1] != "rack-2" || nf.Best.Pods != 3 || nf.Best.Free[gpu] != 24 || nf.Need[gpu] != 32 {
		t.Fatalf("NoFit = %+v, best %+v; want rack-2 holding 3 pods with 24 GPUs free", nf, nf.Best)
	}
	want := "pod set workers needs 32 nvidia.com/gpu (4 pods) in one example.com/rack; best example.com/rack rack-2 holds 3 pods, has 24 nvidia.com/gpu free"
	if nf.Error() != want {
		t.Fatalf("message\n %s\nwant\n %s", nf.Error(), want)
	}
}

func TestPlaceRejectsInvalidPodSets(t *testing.T) {
	s := newTree(t, gpuHost("b1", "r1", 8)).Snapshot()
	cases := []struct {
		name string
		ps   PodSet
		err  string
	}{
		{"no pods", PodSet{Name: "w", Count: 0}, "count 0"},
		{"unknown level", PodSet{Name: "w", Count: 1, Mode: Required, Level: "zone"}, "not in the topology"},
		{"unknown slice level", PodSet{Name: "w", Count: 2, SliceLevel: "zone", SliceSize: 2}, "not in the topology"},
		{"count not a multiple", PodSet{Name: "w", Count: 3, SliceLevel: rack, SliceSize: 2}, "not a multiple"},
		{"slice coarser than level", PodSet{Name: "w", Count: 2, Mode: Required, Level: rack, SliceLevel: block, SliceSize: 2}, "coarser"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Place(&c.ps)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err = %v, want ErrInvalid containing %q", err, c.err)
			}
		})
	}
}

func TestApplyTwiceInOneCycle(t *testing.T) {
	s := newTree(t, concat(rackHosts("b1", "r1", 1, 4), rackHosts("b1", "r2", 1, 4))...).Snapshot()
	ps := gpuPods("w", 4, Required, rack)
	a1, err1 := s.Place(ps)
	a2, err2 := s.Place(ps)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if err := s.Apply(a1); err != nil {
		t.Fatalf("first Apply: %v", err)
	}
	if err := s.Apply(a2); err == nil {
		t.Fatal("second Apply of the same capacity succeeded")
	}
	a3, err := s.Place(ps)
	if err != nil || perDomain(a3, 1)["r2"] != 4 {
		t.Fatalf("placement after Apply = %+v, %v; want r2", a3, err)
	}
	if err := s.Apply(a3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Place(ps); err == nil {
		t.Fatal("a third rack's worth placed with both racks taken")
	}
	if err := s.Unapply(a1); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(a2); err != nil {
		t.Fatalf("Apply after Unapply: %v", err)
	}
}

func TestApplyStaleLayout(t *testing.T) {
	tr := newTree(t, gpuHost("b1", "r1", 8))
	a, _ := tr.Snapshot().Place(gpuPods("w", 1, Unconstrained, ""))
	tr.SetNode(Node{Name: "x", Labels: map[string]string{block: "b1", rack: "r1", HostnameLabel: "x"}, Allocatable: Resources{gpu: 1}, Pods: 1})
	if err := tr.Snapshot().Apply(a); !errors.Is(err, ErrStale) {
		t.Fatalf("err = %v, want ErrStale", err)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	s := newTree(t, gpuHost("b1", "r1", 4)).Snapshot()
	c := s.Clone()
	a, _ := c.Place(gpuPods("w", 4, Required, rack))
	if err := c.Apply(a); err != nil {
		t.Fatal(err)
	}
	if free, _, _ := s.Free("r1-0"); free[gpu] != 4 {
		t.Fatalf("Apply on the clone changed the original: %v", free)
	}
}

func TestAssignmentNamesDomainsAndNodes(t *testing.T) {
	s := newTree(t, concat(rackHosts("b1", "r1", 2, 2), rackHosts("b1", "r2", 1, 8))...).Snapshot()
	a, err := s.Place(gpuPods("w", 4, Required, rack))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Levels) != 3 || len(a.Domains) != 2 || a.Domains[0].Values[1] != "r1" || a.Domains[0].Values[2] != "r1-0" || a.Domains[0].Count != 2 {
		t.Fatalf("assignment = %+v", a)
	}
	if got := perNode(a); !maps.Equal(got, map[string]int32{"r1-0": 2, "r1-1": 2}) {
		t.Fatalf("per node = %v", got)
	}
}

func TestPlaceWithoutHostnameLevel(t *testing.T) {
	tr, err := New([]string{block, rack})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range []string{"r1", "r1", "r2", "r2", "r2"} {
		name := fmt.Sprint("n", i)
		tr.SetNode(Node{Name: name, Labels: map[string]string{block: "b1", rack: r}, Allocatable: Resources{gpu: 2}, Pods: 10})
	}
	a, err := tr.Snapshot().Place(gpuPods("w", 4, Required, rack))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Domains) != 1 || a.Domains[0].Values[1] != "r1" || len(a.Nodes) != 2 {
		t.Fatalf("assignment = %+v, want r1's two nodes", a)
	}
}
