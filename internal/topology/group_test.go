package topology

import (
	"errors"
	"maps"
	"testing"
)

// master and workers of a PyTorchJob-like group sharing one rack.
func masterWorkers(mode Mode, workers int32) []PodSet {
	return []PodSet{
		{Name: "master", Count: 1, Request: Resources{cpu: 2000}, Mode: mode, Level: rack},
		{Name: "workers", Count: workers, Request: Resources{gpu: 1, cpu: 1000}, Mode: mode, Level: rack},
	}
}

func TestPlaceGroup(t *testing.T) {
	cases := []struct {
		name  string
		hosts []host
		sets  []PodSet
		want  []map[string]int32 // per set, pods per rack; nil wants a NoFit
	}{
		{
			name: "the tightest rack where all fit together",
			hosts: []host{
				// r1 holds the workers alone and the master alone, not both.
				{block: "b1", rack: "r1", gpus: 4, cpu: 4000, pods: 110},
				{block: "b1", rack: "r2", gpus: 8, cpu: 16000, pods: 110},
				{block: "b1", rack: "r3", gpus: 16, cpu: 64000, pods: 110},
			},
			sets: masterWorkers(Required, 4),
			want: []map[string]int32{{"r2": 1}, {"r2": 4}},
		},
		{
			name: "required group fits no rack together",
			hosts: []host{
				{block: "b1", rack: "r1", gpus: 4, cpu: 4000, pods: 110},
				{block: "b1", rack: "r2", gpus: 0, cpu: 16000, pods: 110},
			},
			sets: masterWorkers(Required, 4),
		},
		{
			name: "preferred group climbs to a block",
			hosts: []host{
				{block: "b1", rack: "r1", gpus: 4, cpu: 4000, pods: 110},
				{block: "b1", rack: "r2", gpus: 0, cpu: 16000, pods: 110},
			},
			sets: masterWorkers(Preferred, 4),
			want: []map[string]int32{{"r2": 1}, {"r1": 4}},
		},
		{
			name: "preferred group spreads over blocks as a last resort",
			hosts: []host{
				{block: "b1", rack: "r1", gpus: 4, cpu: 4000, pods: 110},
				{block: "b2", rack: "r2", gpus: 0, cpu: 16000, pods: 110},
			},
			sets: masterWorkers(Preferred, 4),
			want: []map[string]int32{{"r2": 1}, {"r1": 4}},
		},
		{
			name: "pod slots are shared by the group",
			hosts: []host{
				{block: "b1", rack: "r1", gpus: 8, cpu: 64000, pods: 4},
				{block: "b1", rack: "r2", gpus: 8, cpu: 64000, pods: 5},
			},
			sets: masterWorkers(Required, 4),
			want: []map[string]int32{{"r2": 1}, {"r2": 4}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newTree(t, c.hosts...).Snapshot()
			as, err := s.PlaceGroup(c.sets)
			if c.want == nil {
				var nf *NoFit
				if !errors.As(err, &nf) || len(nf.Group) != len(c.sets) {
					t.Fatalf("PlaceGroup = %v, want a NoFit naming the group", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("PlaceGroup: %v", err)
			}
			for i, a := range as {
				if got := perDomain(a, 1); !maps.Equal(got, c.want[i]) {
					t.Errorf("%s per rack = %v, want %v", a.PodSet, got, c.want[i])
				}
			}
			if err := s.ApplyAll(as); err != nil {
				t.Fatalf("ApplyAll of a group placement: %v", err)
			}
		})
	}
}

func TestPlaceGroupLeavesSnapshotUnchanged(t *testing.T) {
	s := newTree(t, gpuHost("b1", "r1", 8)).Snapshot()
	if _, err := s.PlaceGroup(masterWorkers(Required, 4)); err != nil {
		t.Fatal(err)
	}
	if free, pods, _ := s.Free("r1-0"); free[gpu] != 8 || free[cpu] != 64000 || pods != 110 {
		t.Fatalf("PlaceGroup took capacity: %v, %d pods", free, pods)
	}
}

func TestApplyAllIsAllOrNothing(t *testing.T) {
	s := newTree(t, gpuHost("b1", "r1", 4)).Snapshot()
	a, _ := s.Place(gpuPods("a", 3, Required, rack))
	b, _ := s.Place(gpuPods("b", 2, Required, rack))
	if err := s.ApplyAll([]*Assignment{a, b}); err == nil {
		t.Fatal("ApplyAll over capacity succeeded")
	}
	if free, _, _ := s.Free("r1-0"); free[gpu] != 4 {
		t.Fatalf("a failed ApplyAll kept capacity: %v", free)
	}
}

func TestPlaceGroupRejectsMixedLevels(t *testing.T) {
	s := newTree(t, gpuHost("b1", "r1", 8)).Snapshot()
	sets := masterWorkers(Required, 2)
	sets[1].Level = block
	if _, err := s.PlaceGroup(sets); !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
}

func TestGroupNoFitMessage(t *testing.T) {
	s := newTree(t, host{block: "b1", rack: "r1", gpus: 4, cpu: 4000, pods: 110}).Snapshot()
	_, err := s.PlaceGroup(masterWorkers(Required, 4))
	want := "pod set workers needs 4000 cpu, 4 nvidia.com/gpu (4 pods) in one example.com/rack together with master; each fits some example.com/rack alone, none fits there together"
	if err == nil || err.Error() != want {
		t.Fatalf("err\n %v\nwant\n %s", err, want)
	}
}
