package pytorchjob

import (
	"testing"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/controllers/jobframework"
)

func pytorchJob(workers int32) *Job {
	return &Job{Spec: kftraining.PyTorchJobSpec{
		RunPolicy: kftraining.RunPolicy{Suspend: ptr.To(true)},
		PyTorchReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
			kftraining.PyTorchJobReplicaTypeWorker: {Replicas: ptr.To(workers)},
			kftraining.PyTorchJobReplicaTypeMaster: {},
		},
	}}
}

// TestPodSetsMasterFirst: the master comes first whatever the map order,
// and a replica type without replicas counts one pod.
func TestPodSetsMasterFirst(t *testing.T) {
	for range 10 {
		ps := pytorchJob(4).PodSets()
		if len(ps) != 2 || ps[0].Name != "master" || ps[0].Count != 1 || ps[1].Name != "worker" || ps[1].Count != 4 {
			t.Fatalf("pod sets = %+v", ps)
		}
	}
}

func TestRunInjectsPlacementPerReplicaType(t *testing.T) {
	j := pytorchJob(2)
	err := j.RunWithPodSetsInfo([]jobframework.PodSetInfo{
		{Name: "master", NodeSelector: map[string]string{"pool": "cpu"}},
		{Name: "worker", NodeSelector: map[string]string{"gpu": "a100"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if j.IsSuspended() {
		t.Error("still suspended")
	}
	if got := j.Spec.PyTorchReplicaSpecs[kftraining.PyTorchJobReplicaTypeWorker].Template.Spec.NodeSelector["gpu"]; got != "a100" {
		t.Errorf("worker gpu selector = %q", got)
	}
	if got := j.Spec.PyTorchReplicaSpecs[kftraining.PyTorchJobReplicaTypeMaster].Template.Spec.NodeSelector["pool"]; got != "cpu" {
		t.Errorf("master pool selector = %q", got)
	}
	j.Suspend()
	if !j.RestorePodSetsInfo([]jobframework.PodSetInfo{{Name: "master"}, {Name: "worker"}}) {
		t.Error("restore reported no change")
	}
	if len(j.Spec.PyTorchReplicaSpecs[kftraining.PyTorchJobReplicaTypeWorker].Template.Spec.NodeSelector) != 0 {
		t.Error("worker placement not restored")
	}
}

func TestRunRefusesUnknownPodSet(t *testing.T) {
	j := pytorchJob(1)
	if err := j.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "launcher"}}); err == nil {
		t.Fatal("no error for a pod set the job does not have")
	}
	if !j.IsSuspended() {
		t.Error("unsuspended despite the error")
	}
}

func TestFinishedReadyActive(t *testing.T) {
	cond := func(typ kftraining.JobConditionType, s corev1.ConditionStatus) kftraining.JobCondition {
		return kftraining.JobCondition{Type: typ, Status: s, Message: string(typ)}
	}
	cases := map[string]struct {
		conds                      []kftraining.JobCondition
		active                     int32
		finished, succeeded, ready bool
		isActive                   bool
	}{
		"created":                 {},
		"running":                 {conds: []kftraining.JobCondition{cond(kftraining.JobRunning, corev1.ConditionTrue)}, active: 3, ready: true, isActive: true},
		"running false":           {conds: []kftraining.JobCondition{cond(kftraining.JobRunning, corev1.ConditionFalse)}},
		"succeeded":               {conds: []kftraining.JobCondition{cond(kftraining.JobSucceeded, corev1.ConditionTrue)}, finished: true, succeeded: true},
		"failed":                  {conds: []kftraining.JobCondition{cond(kftraining.JobFailed, corev1.ConditionTrue)}, finished: true},
		"failed false is running": {conds: []kftraining.JobCondition{cond(kftraining.JobFailed, corev1.ConditionFalse)}, active: 1, isActive: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			j := pytorchJob(1)
			j.Status.Conditions = tc.conds
			j.Status.ReplicaStatuses = map[kftraining.ReplicaType]*kftraining.ReplicaStatus{
				kftraining.PyTorchJobReplicaTypeWorker: {Active: tc.active}, kftraining.PyTorchJobReplicaTypeMaster: nil,
			}
			_, succeeded, finished := j.Finished()
			if finished != tc.finished || succeeded != tc.succeeded || j.PodsReady() != tc.ready || j.IsActive() != tc.isActive {
				t.Errorf("finished=%v succeeded=%v ready=%v active=%v", finished, succeeded, j.PodsReady(), j.IsActive())
			}
		})
	}
}
