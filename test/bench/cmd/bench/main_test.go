package main

import (
	"slices"
	"testing"
)

// TestWithoutFlag: the command recorded with a comparison's table leaves
// out a session's -start-runs-for, however it was written.
func TestWithoutFlag(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"-suites", "tas", "-start-runs-for", "2h", "-reps", "3"}, []string{"-suites", "tas", "-reps", "3"}},
		{[]string{"-start-runs-for=2h", "-reps", "3"}, []string{"-reps", "3"}},
		{[]string{"--start-runs-for", "90m"}, nil},
		{[]string{"-out", "start-runs-for"}, []string{"-out", "start-runs-for"}},
	} {
		if got := withoutFlag(tc.in, "start-runs-for"); !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}
