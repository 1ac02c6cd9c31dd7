package job

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/controllers/jobframework"
)

func TestPodCount(t *testing.T) {
	cases := map[string]struct {
		parallelism, completions *int32
		want                     int32
	}{
		"parallelism":                        {ptr.To[int32](4), ptr.To[int32](8), 4},
		"fewer completions than parallelism": {ptr.To[int32](4), ptr.To[int32](2), 2},
		"defaults to one":                    {nil, nil, 1},
		"work queue (no completions)":        {ptr.To[int32](3), nil, 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			j := &Job{Spec: batchv1.JobSpec{Parallelism: tc.parallelism, Completions: tc.completions}}
			if got := j.PodSets()[0].Count; got != tc.want {
				t.Errorf("count = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestRunAndRestore(t *testing.T) {
	j := &Job{Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"zone": "a"},
	}}}}
	original := j.PodSets()
	err := j.RunWithPodSetsInfo([]jobframework.PodSetInfo{{
		Name: "main", NodeSelector: map[string]string{"gpu": "a100"},
		Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if j.IsSuspended() || j.Spec.Template.Spec.NodeSelector["gpu"] != "a100" || j.Spec.Template.Spec.NodeSelector["zone"] != "a" ||
		len(j.Spec.Template.Spec.Tolerations) != 1 {
		t.Fatalf("not started with the placement: %+v", j.Spec)
	}
	j.Suspend()
	info := jobframework.PodSetInfo{Name: "main", NodeSelector: original[0].Template.Spec.NodeSelector}
	if !j.RestorePodSetsInfo([]jobframework.PodSetInfo{info}) {
		t.Fatal("restore reported no change")
	}
	if len(j.Spec.Template.Spec.NodeSelector) != 1 || len(j.Spec.Template.Spec.Tolerations) != 0 {
		t.Errorf("not restored: %+v", j.Spec.Template.Spec)
	}
	if j.RestorePodSetsInfo([]jobframework.PodSetInfo{info}) {
		t.Error("a second restore changed something")
	}
}

func TestRunRefusesConflictingSelector(t *testing.T) {
	j := &Job{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"gpu": "h100"}}}}}
	if err := j.RunWithPodSetsInfo([]jobframework.PodSetInfo{{NodeSelector: map[string]string{"gpu": "a100"}}}); err == nil {
		t.Error("a conflicting node selector was overwritten")
	}
}

func TestFinished(t *testing.T) {
	cases := map[string]struct {
		conds               []batchv1.JobCondition
		finished, succeeded bool
	}{
		"running":                  {nil, false, false},
		"complete":                 {[]batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}, true, true},
		"failed":                   {[]batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}, true, false},
		"suspended condition only": {[]batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}, false, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			j := &Job{Status: batchv1.JobStatus{Conditions: tc.conds}}
			_, succeeded, finished := j.Finished()
			if finished != tc.finished || succeeded != tc.succeeded {
				t.Errorf("finished=%v succeeded=%v", finished, succeeded)
			}
		})
	}
}

func TestWorkloadNameIsDeterministicAndBounded(t *testing.T) {
	a := jobframework.WorkloadName("Job", "train", "uid-1")
	if a != jobframework.WorkloadName("Job", "train", "uid-1") {
		t.Error("not deterministic")
	}
	if a == jobframework.WorkloadName("Job", "train", "uid-2") {
		t.Error("a recreated job reuses the old workload name")
	}
	long := jobframework.WorkloadName("Job", string(make([]byte, 300)), "uid")
	if len(long) > 253 {
		t.Errorf("name of %d characters", len(long))
	}
}

// A bad job-min-parallelism is reported under the key the user wrote,
// Kueue's spelling included, with the value they wrote.
func TestMinParallelismErrorNamesTheUsersKey(t *testing.T) {
	for _, key := range []string{"muster.dev/job-min-parallelism", "kueue.x-k8s.io/job-min-parallelism"} {
		j := &Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4)}}
		j.SetAnnotations(map[string]string{key: "zero"})
		errs := j.ValidateQueued()
		if len(errs) != 1 {
			t.Fatalf("%s: errors %v, want one", key, errs)
		}
		if want := "metadata.annotations[" + key + "]"; errs[0].Field != want || errs[0].BadValue != "zero" {
			t.Errorf("%s: error at %s (value %v), want %s (\"zero\")", key, errs[0].Field, errs[0].BadValue, want)
		}
	}
}

func TestPodFailuresTolerated(t *testing.T) {
	ignoreDisruptions := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:          batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
	}}}
	for name, tc := range map[string]struct {
		spec   batchv1.JobSpec
		failed int32
		want   int32
		ok     bool
	}{
		"the default backoffLimit":         {batchv1.JobSpec{}, 0, 6, true},
		"what is left of it":               {batchv1.JobSpec{BackoffLimit: ptr.To[int32](2)}, 1, 1, true},
		"none left":                        {batchv1.JobSpec{BackoffLimit: ptr.To[int32](0)}, 3, 0, true},
		"disruptions ignored: no bound":    {batchv1.JobSpec{PodFailurePolicy: ignoreDisruptions}, 0, 0, false},
		"a limit per index: not the Job's": {batchv1.JobSpec{BackoffLimitPerIndex: ptr.To[int32](1)}, 0, 0, false},
	} {
		t.Run(name, func(t *testing.T) {
			j := &Job{Spec: tc.spec, Status: batchv1.JobStatus{Failed: tc.failed}}
			n, ok := j.PodFailuresTolerated()
			if n != tc.want || ok != tc.ok {
				t.Errorf("PodFailuresTolerated() = %d, %t, want %d, %t", n, ok, tc.want, tc.ok)
			}
		})
	}
}
