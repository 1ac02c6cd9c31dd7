package jobset

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/musterhq/muster/controllers/jobframework"
)

func replicatedJob(name string, replicas int32, parallelism, completions *int32) jobsetv1alpha2.ReplicatedJob {
	return jobsetv1alpha2.ReplicatedJob{Name: name, Replicas: replicas, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		Parallelism: parallelism, Completions: completions,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}},
	}}}
}

func jobSet(rjs ...jobsetv1alpha2.ReplicatedJob) *Job {
	return &Job{Spec: jobsetv1alpha2.JobSetSpec{Suspend: ptr.To(true), ReplicatedJobs: rjs}}
}

// Each replicated job is one pod set of replicas × the pods each child Job
// runs at once, admitted whole.
func TestPodSetsCountEveryChildJobsPods(t *testing.T) {
	j := jobSet(
		replicatedJob("driver", 1, nil, nil),
		replicatedJob("workers", 3, ptr.To[int32](4), ptr.To[int32](4)),
		replicatedJob("fewer-completions", 2, ptr.To[int32](4), ptr.To[int32](2)),
	)
	want := map[string]int32{"driver": 1, "workers": 12, "fewer-completions": 4}
	ps := j.PodSets()
	if len(ps) != len(want) {
		t.Fatalf("%d pod sets, want %d", len(ps), len(want))
	}
	for _, p := range ps {
		if p.Count != want[p.Name] || p.MinCount != nil {
			t.Errorf("pod set %s: %d pods (min %v), want %d admitted whole", p.Name, p.Count, p.MinCount, want[p.Name])
		}
	}
}

// Starting places each replicated job's template and nothing else;
// stopping puts the placement back.
func TestRunPlacesEachReplicatedJob(t *testing.T) {
	j := jobSet(replicatedJob("driver", 1, nil, nil), replicatedJob("workers", 2, ptr.To[int32](2), nil))
	infos := []jobframework.PodSetInfo{
		{Name: "driver", Count: 1, NodeSelector: map[string]string{"pool": "cpu"}},
		{Name: "workers", Count: 4, NodeSelector: map[string]string{"pool": "gpu"},
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}},
	}
	if err := j.RunWithPodSetsInfo(infos); err != nil {
		t.Fatal(err)
	}
	driver, workers := &j.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec, &j.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec
	if j.IsSuspended() || driver.NodeSelector["pool"] != "cpu" || workers.NodeSelector["pool"] != "gpu" || len(workers.Tolerations) != 1 || len(driver.Tolerations) != 0 {
		t.Fatalf("after run: suspended %v, driver %v %v, workers %v %v", j.IsSuspended(), driver.NodeSelector, driver.Tolerations, workers.NodeSelector, workers.Tolerations)
	}
	j.Suspend()
	if !j.RestorePodSetsInfo([]jobframework.PodSetInfo{{Name: "driver", Count: 1}, {Name: "workers", Count: 4}}) {
		t.Fatal("restore changed nothing")
	}
	if len(driver.NodeSelector) != 0 || len(workers.NodeSelector) != 0 || len(workers.Tolerations) != 0 {
		t.Errorf("the placement was not put back: %v %v %v", driver.NodeSelector, workers.NodeSelector, workers.Tolerations)
	}
	if err := j.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "launcher"}}); err == nil {
		t.Error("a pod set the JobSet does not have was placed")
	}
}

// The JobSet is ready when every child Job is ready or done, active while
// one runs, finished on the JobSet controller's terminal condition — not
// while it restarts its Jobs.
func TestStatus(t *testing.T) {
	j := jobSet(replicatedJob("driver", 1, nil, nil), replicatedJob("workers", 2, nil, nil))
	if j.PodsReady() || j.IsActive() {
		t.Fatal("a new JobSet is ready or active")
	}
	j.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "driver", Ready: 1, Active: 1}, {Name: "workers", Ready: 1, Succeeded: 0, Active: 2}}
	if j.PodsReady() || !j.IsActive() {
		t.Errorf("one of two worker Jobs ready: ready %v, active %v", j.PodsReady(), j.IsActive())
	}
	j.Status.ReplicatedJobsStatus[1].Succeeded = 1
	if !j.PodsReady() {
		t.Error("every child Job ready or done, yet not ready")
	}
	j.Status.Conditions = []metav1.Condition{{Type: string(jobsetv1alpha2.JobSetRestarting), Status: metav1.ConditionTrue}}
	if _, _, done := j.Finished(); done {
		t.Error("a restarting JobSet is finished")
	}
	j.Status.Conditions = append(j.Status.Conditions, metav1.Condition{Type: string(jobsetv1alpha2.JobSetFailed), Status: metav1.ConditionTrue, Message: "jobset failed"})
	if msg, ok, done := j.Finished(); !done || ok || msg != "jobset failed" {
		t.Errorf("failed: %q succeeded %v finished %v", msg, ok, done)
	}
	j.Status.Conditions = []metav1.Condition{{Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue}}
	if _, ok, done := j.Finished(); !done || !ok {
		t.Errorf("completed: succeeded %v finished %v", ok, done)
	}
}
