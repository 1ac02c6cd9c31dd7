package mpijob

import (
	"testing"

	kfmpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/controllers/jobframework"
)

func mpiJob(workers int32) *Job {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mpi"}}}}
	return &Job{Spec: kfmpi.MPIJobSpec{
		RunPolicy: kfmpi.RunPolicy{Suspend: ptr.To(true)},
		MPIReplicaSpecs: map[kfmpi.MPIReplicaType]*kfmpi.ReplicaSpec{
			kfmpi.MPIReplicaTypeLauncher: {Replicas: ptr.To[int32](1), Template: *tmpl.DeepCopy()},
			kfmpi.MPIReplicaTypeWorker:   {Replicas: ptr.To(workers), Template: *tmpl.DeepCopy()},
		},
	}}
}

func (j *Job) workers() *kfmpi.ReplicaSpec { return j.Spec.MPIReplicaSpecs[kfmpi.MPIReplicaTypeWorker] }

// The launcher, then the workers; the workers may be admitted down to what
// the pod group's minAvailable leaves after the launcher.
func TestPodSetsAndTheWorkersMinimum(t *testing.T) {
	for name, tc := range map[string]struct {
		minAvailable *int32
		wantMin      *int32
	}{
		"no minimum":                {nil, nil},
		"minAvailable 3 of 1 + 8":   {ptr.To[int32](3), ptr.To[int32](2)},
		"minAvailable is every pod": {ptr.To[int32](9), nil},
		"minAvailable the launcher": {ptr.To[int32](1), nil},
	} {
		t.Run(name, func(t *testing.T) {
			j := mpiJob(8)
			if tc.minAvailable != nil {
				j.Spec.RunPolicy.SchedulingPolicy = &kfmpi.SchedulingPolicy{MinAvailable: tc.minAvailable}
			}
			ps := j.PodSets()
			if len(ps) != 2 || ps[0].Name != "launcher" || ps[0].Count != 1 || ps[0].MinCount != nil || ps[1].Name != "worker" || ps[1].Count != 8 {
				t.Fatalf("pod sets %+v", ps)
			}
			if !ptr.Equal(ps[1].MinCount, tc.wantMin) {
				t.Errorf("workers' minimum %v, want %v", ptr.Deref(ps[1].MinCount, -1), ptr.Deref(tc.wantMin, -1))
			}
		})
	}
	launcherOnly := mpiJob(0)
	delete(launcherOnly.Spec.MPIReplicaSpecs, kfmpi.MPIReplicaTypeWorker)
	if ps := launcherOnly.PodSets(); len(ps) != 1 || ps[0].Name != "launcher" {
		t.Errorf("a launcher alone: pod sets %+v", ps)
	}
}

// A partial admission starts the job with the admitted workers; stopping
// gives the user's count and templates back.
func TestRunWithFewerWorkersAndRestore(t *testing.T) {
	j := mpiJob(8)
	sel := map[string]string{"gpu": "h100"}
	if err := j.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "launcher", Count: 1, NodeSelector: sel}, {Name: "worker", Count: 5, NodeSelector: sel}}); err != nil {
		t.Fatal(err)
	}
	if j.IsSuspended() || *j.workers().Replicas != 5 || j.workers().Template.Spec.NodeSelector["gpu"] != "h100" {
		t.Fatalf("after run: suspended %v, workers %d %v", j.IsSuspended(), *j.workers().Replicas, j.workers().Template.Spec.NodeSelector)
	}
	j.Suspend()
	if !j.RestorePodSetsInfo([]jobframework.PodSetInfo{{Name: "launcher", Count: 1}, {Name: "worker", Count: 8}}) {
		t.Fatal("restore changed nothing")
	}
	if *j.workers().Replicas != 8 || len(j.workers().Template.Spec.NodeSelector) != 0 || len(j.Annotations) != 0 {
		t.Errorf("after restore: workers %d %v, annotations %v", *j.workers().Replicas, j.workers().Template.Spec.NodeSelector, j.Annotations)
	}
}

// A gang scheduler's pod group is made by the MPI operator from
// minAvailable: set to the admitted pods and the queue, both put back.
func TestGangMinimumIsPutBack(t *testing.T) {
	j := mpiJob(4)
	j.SetGangMinimum(5, "team-a")
	sp := j.Spec.RunPolicy.SchedulingPolicy
	if *sp.MinAvailable != 5 || sp.Queue != "team-a" {
		t.Fatalf("minAvailable %d, queue %q", *sp.MinAvailable, sp.Queue)
	}
	j.RestorePodSetsInfo([]jobframework.PodSetInfo{{Name: "launcher", Count: 1}, {Name: "worker", Count: 4}})
	if sp.MinAvailable != nil || sp.Queue != "" || len(j.Annotations) != 0 {
		t.Errorf("after restore: minAvailable %v, queue %q, annotations %v", sp.MinAvailable, sp.Queue, j.Annotations)
	}
}

func TestStatus(t *testing.T) {
	j := mpiJob(2)
	if _, _, done := j.Finished(); done || j.PodsReady() || j.IsActive() {
		t.Fatal("a new MPIJob is finished, ready or active")
	}
	j.Status.ReplicaStatuses = map[kfmpi.MPIReplicaType]*kfmpi.ReplicaStatus{kfmpi.MPIReplicaTypeWorker: {Active: 2}}
	j.Status.Conditions = []kfmpi.JobCondition{{Type: kfmpi.JobRunning, Status: corev1.ConditionTrue}}
	if !j.PodsReady() || !j.IsActive() {
		t.Error("a running MPIJob is not ready and active")
	}
	j.Status.Conditions = append(j.Status.Conditions, kfmpi.JobCondition{Type: kfmpi.JobFailed, Status: corev1.ConditionTrue, Message: "launcher failed"})
	if msg, ok, done := j.Finished(); !done || ok || msg != "launcher failed" {
		t.Errorf("failed: %q %v %v", msg, ok, done)
	}
	j.Status.Conditions = []kfmpi.JobCondition{{Type: kfmpi.JobSucceeded, Status: corev1.ConditionTrue}}
	if _, ok, done := j.Finished(); !done || !ok {
		t.Errorf("succeeded: %v %v", ok, done)
	}
}
