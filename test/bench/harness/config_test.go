package harness

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

func TestBaselineIsKueuesMix(t *testing.T) {
	cfg, err := LoadConfig(filepath.Join(repoRoot(t), "test/bench/configs/baseline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plan := cfg.Plan()
	if len(plan.Queues) != 30 || plan.Workloads() != 15000 || plan.Capacity() != 600_000 {
		t.Fatalf("baseline: %d queues, %d workloads, %d millicores; want 30, 15000, 600000", len(plan.Queues), plan.Workloads(), plan.Capacity())
	}
	if !reflect.DeepEqual(plan.Classes, []string{"small", "medium", "large"}) {
		t.Fatalf("classes %v", plan.Classes)
	}
	if q := plan.Queues[7]; q.Name != "cq-0-1-cohort-0-1" || q.Cohort != "cohort-0-1" {
		t.Fatalf("names follow Kueue's generator: got %s in %s", q.Name, q.Cohort)
	}
}

// TestReadsKueuesOwnGeneratorFile loads Kueue v0.17.0's baseline generator
// file from the module cache, unchanged, and expects the same plan as ours.
func TestReadsKueuesOwnGeneratorFile(t *testing.T) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue")
	cmd.Dir = filepath.Join(repoRoot(t), "test/bench/kueue")
	dir, err := cmd.Output()
	if err != nil {
		t.Fatalf("finding Kueue's module (make bench-bins downloads it): %v", err)
	}
	theirs, err := LoadConfig(filepath.Join(strings.TrimSpace(string(dir)), "test/performance/scheduler/configs/baseline/generator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := LoadConfig(filepath.Join(repoRoot(t), "test/bench/configs/baseline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(theirs.Plan(), ours.Plan()) {
		t.Fatal("Kueue's baseline generator file and ours differ")
	}
}

func TestConfigErrors(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"unknown field":   {"cohorts:\n- className: c\n  count: 1\n  bogus: 1\n", "unknown field"},
		"no cohorts":      {"cohorts: []\n", "no cohorts"},
		"topology":        {"topology: {name: t}\ncohorts:\n- {className: c, count: 1}\n", "topology"},
		"negative quota":  {"cohorts:\n- className: c\n  count: 1\n  queuesSets:\n  - {className: q, count: 1, nominalQuota: -1}\n", "negative"},
		"bad policy":      {"cohorts:\n- className: c\n  count: 1\n  queuesSets:\n  - {className: q, count: 1, nominalQuota: 1, withinClusterQueue: Sometimes}\n", "preemption policy"},
		"zero request":    {"cohorts:\n- className: c\n  count: 1\n  queuesSets:\n  - className: q\n    count: 1\n    nominalQuota: 1\n    workloadsSets:\n    - count: 1\n      workloads: [{className: w, request: 0}]\n", "positive request"},
		"tas constraint":  {"cohorts:\n- className: c\n  count: 1\n  queuesSets:\n  - className: q\n    count: 1\n    nominalQuota: 1\n    workloadsSets:\n    - count: 1\n      workloads: [{className: w, request: 1, tasConstraint: required}]\n", "topology-aware"},
		"missing classes": {"cohorts:\n- count: 1\n", "className"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
