package jobframework

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	base, maxDelay := 60*time.Second, 10*time.Minute
	cases := map[int32]time.Duration{1: time.Minute, 2: 2 * time.Minute, 3: 4 * time.Minute, 4: 8 * time.Minute, 5: 10 * time.Minute, 30: 10 * time.Minute}
	for n, want := range cases {
		if got := Backoff(base, maxDelay, n); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", n, got, want)
		}
	}
}
