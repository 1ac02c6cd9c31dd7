package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPeakRSSIsTheChilds: a child's peak RSS is its own, however large the
// harness has grown before starting it (rusage reported the harness's).
func TestPeakRSSIsTheChilds(t *testing.T) {
	ballast := make([]byte, 256<<20)
	for i := range ballast {
		if i%4096 == 0 {
			ballast[i] = 1
		}
	}
	logFile, err := os.Create(filepath.Join(t.TempDir(), "sleep.log"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := startCmd(exec.Command("sleep", "30"), logFile)
	if err != nil {
		t.Fatal(err)
	}
	u, err := p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if !u.MaxRSSOwn || u.MaxRSSMiB <= 0 || u.MaxRSSMiB > 64 {
		t.Errorf("sleep's peak RSS %.1f MiB, want its own (a few MiB), not the harness's (≥ 256 MiB)", u.MaxRSSMiB)
	}
	if ballast[0] != 1 {
		t.Fatal("ballast")
	}
}

// TestRSSRowsByMeasure: the report gives a controller's own peak RSS and
// rusage's (of records before it) in rows apart, and leaves out a row no
// run measured.
func TestRSSRowsByMeasure(t *testing.T) {
	own := &Result{Target: "muster", Usage: Usage{MaxRSSMiB: 300, MaxRSSOwn: true}}
	old := &Result{Target: "kueue", Usage: Usage{MaxRSSMiB: 700}}
	table := rangeTable([]*Result{own}, []*Result{old}, nil)
	for _, want := range []string{"| controller max RSS (MiB) | 300 | – | – |", "| controller max RSS, rusage: at least the harness's (MiB) | – | 700 | – |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if table := rangeTable([]*Result{own}, []*Result{own}, nil); strings.Contains(table, "rusage") {
		t.Errorf("a row no run measured is left out:\n%s", table)
	}
}
