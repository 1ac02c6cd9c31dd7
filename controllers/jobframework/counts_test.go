package jobframework

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
)

// Stopping a partially admitted job puts back the count Muster changed,
// unless the user has changed it since: their resize stays.
func TestRestoreCountKeepsTheUsersResize(t *testing.T) {
	for name, tc := range map[string]struct {
		resizeTo *int32
		want     *int32
	}{
		"unchanged since: restored":       {nil, ptr.To[int32](12)},
		"resized by its user: theirs":     {ptr.To[int32](6), ptr.To[int32](6)},
		"resized back to what Muster set": {ptr.To[int32](8), ptr.To[int32](12)},
	} {
		t.Run(name, func(t *testing.T) {
			j := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](12)}}
			SetCount(j, "parallelism", &j.Spec.Parallelism, 8)
			if tc.resizeTo != nil {
				j.Spec.Parallelism = tc.resizeTo
			}
			if !RestoreCount(j, "parallelism", &j.Spec.Parallelism) {
				t.Fatal("nothing restored")
			}
			if *j.Spec.Parallelism != *tc.want {
				t.Errorf("parallelism %d, want %d", *j.Spec.Parallelism, *tc.want)
			}
			if _, ok := j.Annotations[OriginalCountsAnnotation]; ok {
				t.Errorf("annotation left: %v", j.Annotations)
			}
		})
	}
}

// A second partial admission keeps the first original; an unset original
// comes back unset; an annotation written before the set value was kept
// restores as it did.
func TestSetCountKeepsTheFirstOriginal(t *testing.T) {
	j := &batchv1.Job{}
	SetCount(j, "completions", &j.Spec.Completions, 8)
	SetCount(j, "completions", &j.Spec.Completions, 6)
	if got := j.Annotations[OriginalCountsAnnotation]; got != "completions=@6" {
		t.Errorf("annotation %q", got)
	}
	RestoreCount(j, "completions", &j.Spec.Completions)
	if j.Spec.Completions != nil {
		t.Errorf("completions %d, want unset", *j.Spec.Completions)
	}
	old := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3)}}
	old.SetAnnotations(map[string]string{OriginalCountsAnnotation: "parallelism=12"})
	RestoreCount(old, "parallelism", &old.Spec.Parallelism)
	if *old.Spec.Parallelism != 12 {
		t.Errorf("old-format annotation: parallelism %d, want 12", *old.Spec.Parallelism)
	}
}
