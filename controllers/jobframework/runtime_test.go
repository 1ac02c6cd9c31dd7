package jobframework

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestMaxExecutionTime: the ways a job bounds its runtime, the shortest
// applying; Kueue's label only when Kueue's labels are accepted; what is
// malformed is named by its field.
func TestMaxExecutionTime(t *testing.T) {
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		kueue       bool
		want        *int32
		wantErr     string
	}{
		{name: "none"},
		{name: "muster label", labels: map[string]string{MaxExecTimeLabel: "600"}, want: ptr.To[int32](600)},
		{name: "kueue label accepted", labels: map[string]string{kueueMaxExecTimeLabel: "600"}, kueue: true, want: ptr.To[int32](600)},
		{name: "kueue label ignored", labels: map[string]string{kueueMaxExecTimeLabel: "600"}},
		{name: "duration annotation", annotations: map[string]string{MaxRuntimeAnnotation: "1h30m"}, want: ptr.To[int32](5400)},
		{name: "shortest applies", labels: map[string]string{MaxExecTimeLabel: "7200"}, annotations: map[string]string{MaxRuntimeAnnotation: "1h"}, want: ptr.To[int32](3600)},
		{name: "zero seconds", labels: map[string]string{MaxExecTimeLabel: "0"}, wantErr: "metadata.labels[muster.dev/max-exec-time-seconds]"},
		{name: "not a number", labels: map[string]string{MaxExecTimeLabel: "1h"}, wantErr: "whole number of seconds"},
		{name: "bad duration", annotations: map[string]string{MaxRuntimeAnnotation: "soon"}, wantErr: "metadata.annotations[muster.dev/max-runtime]"},
		{name: "under a second", annotations: map[string]string{MaxRuntimeAnnotation: "500ms"}, wantErr: "from 1s to 68 years"},
		{name: "too long", annotations: map[string]string{MaxRuntimeAnnotation: "1000000h"}, wantErr: "from 1s to 68 years"},
		{name: "too long to parse", annotations: map[string]string{MaxRuntimeAnnotation: "100000000h"}, wantErr: "from 1s to 68 years"},
		{name: "too many seconds", labels: map[string]string{MaxExecTimeLabel: "2147483648"}, wantErr: "from 1 to 2147483647"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels, Annotations: tc.annotations}}
			got, errs := maxExecutionTime(job, Options{AcceptKueueQueueLabel: tc.kueue})
			if tc.wantErr != "" {
				if len(errs) != 1 || !strings.Contains(errs.ToAggregate().Error(), tc.wantErr) {
					t.Fatalf("errors %v, want one with %q", errs, tc.wantErr)
				}
				return
			}
			if len(errs) > 0 || !ptr.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", ptr.Deref(got, -1), errs, ptr.Deref(tc.want, -1))
			}
		})
	}
}
