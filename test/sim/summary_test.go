package sim

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedSummaryIsCurrent replays the traces and compares the
// numbers with docs/images/sim-summary.md: a core change that moves them
// fails here until `make sim` regenerates the plots and the summary, so
// the docs never show numbers the code no longer gives.
func TestCommittedSummaryIsCurrent(t *testing.T) {
	outs, err := RunScenarios("traces")
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join("..", "..", "docs", "images", "sim-summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Summary(outs); got != string(committed) {
		t.Errorf("docs/images/sim-summary.md is stale: run make sim and commit docs/images.\nnow:\n%s", got)
	}
}
