package raycluster

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/controllers/jobframework"
)

func rayCluster(groups ...rayv1.WorkerGroupSpec) *Cluster {
	return &Cluster{Spec: rayv1.RayClusterSpec{Suspend: ptr.To(true), WorkerGroupSpecs: groups}}
}

// TestWorkerCount: replicas bounded by min and max, times hosts per replica.
func TestWorkerCount(t *testing.T) {
	cases := map[string]struct {
		g    rayv1.WorkerGroupSpec
		want int32
	}{
		"replicas":             {rayv1.WorkerGroupSpec{Replicas: ptr.To[int32](3)}, 3},
		"unset: min":           {rayv1.WorkerGroupSpec{MinReplicas: ptr.To[int32](2)}, 2},
		"below min":            {rayv1.WorkerGroupSpec{Replicas: ptr.To[int32](1), MinReplicas: ptr.To[int32](2)}, 2},
		"above max":            {rayv1.WorkerGroupSpec{Replicas: ptr.To[int32](9), MaxReplicas: ptr.To[int32](4)}, 4},
		"multi-host":           {rayv1.WorkerGroupSpec{Replicas: ptr.To[int32](2), NumOfHosts: 4}, 8},
		"nothing set: no pods": {rayv1.WorkerGroupSpec{}, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := workers(&tc.g); got != tc.want {
				t.Errorf("workers = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPodSetsHeadThenGroups(t *testing.T) {
	c := rayCluster(rayv1.WorkerGroupSpec{GroupName: "GPU", Replicas: ptr.To[int32](2)})
	ps := c.PodSets()
	if len(ps) != 2 || ps[0].Name != headPodSet || ps[0].Count != 1 || ps[1].Name != "worker-gpu" || ps[1].Count != 2 {
		t.Fatalf("pod sets = %+v", ps)
	}
}

// TestStartedMark: Muster's own suspension drops the started mark, so only
// a user's suspension of a started cluster finishes it.
func TestStartedMark(t *testing.T) {
	c := rayCluster(rayv1.WorkerGroupSpec{GroupName: "gpu", Replicas: ptr.To[int32](1)})
	if err := c.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "worker-gpu", NodeSelector: map[string]string{"gpu": "a100"}}}); err != nil {
		t.Fatal(err)
	}
	if c.IsSuspended() || c.Spec.WorkerGroupSpecs[0].Template.Spec.NodeSelector["gpu"] != "a100" {
		t.Fatalf("not started with the placement: %+v", c.Spec)
	}
	if _, _, finished := c.Finished(); finished {
		t.Error("a running cluster is finished")
	}
	c.Spec.Suspend = ptr.To(true) // the user suspends it
	if _, _, finished := c.Finished(); !finished {
		t.Error("a started cluster its user suspended is not finished")
	}
	c.Suspend() // Muster suspends it
	if _, _, finished := c.Finished(); finished {
		t.Error("a cluster Muster suspended is finished")
	}
}

func TestValidateQueuedRefusesAutoscaling(t *testing.T) {
	c := rayCluster()
	if errs := c.ValidateQueued(); len(errs) != 0 {
		t.Errorf("fixed-size cluster refused: %v", errs)
	}
	c.Spec.EnableInTreeAutoscaling = ptr.To(true)
	if errs := c.ValidateQueued(); len(errs) != 1 || errs[0].Field != "spec.enableInTreeAutoscaling" {
		t.Errorf("autoscaling cluster: %v", errs)
	}
}

func TestReadyAndActive(t *testing.T) {
	c := rayCluster()
	c.Status.State = rayv1.Ready //nolint:staticcheck // the adapter reads State, see PodsReady
	c.Status.ReadyWorkerReplicas = 1
	if !c.PodsReady() || !c.IsActive() {
		t.Error("a ready cluster with a worker is not ready and active")
	}
	c.Status.State = rayv1.Suspended //nolint:staticcheck // as above
	if c.PodsReady() || c.IsActive() {
		t.Error("a suspended cluster whose status still counts a worker is ready or active")
	}
}
