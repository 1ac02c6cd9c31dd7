package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRangeAndRatio(t *testing.T) {
	if r := RangeOf([]float64{3, 1, 2}); r != (Range{Median: 2, Min: 1, Max: 3, N: 3}) {
		t.Errorf("odd: %+v", r)
	}
	if r := RangeOf([]float64{4, 1, 2, 3}); r.Median != 2.5 {
		t.Errorf("even: median %v, want 2.5", r.Median)
	}
	mid, lo, hi, ok := Ratio(RangeOf([]float64{10, 12, 11}), RangeOf([]float64{5, 6, 4}))
	if !ok || mid != 11.0/5 || lo != 10.0/6 || hi != 12.0/4 {
		t.Errorf("ratio %v (%v–%v) %v", mid, lo, hi, ok)
	}
	if _, _, _, ok := Ratio(RangeOf([]float64{1}), RangeOf([]float64{0, 1})); ok {
		t.Error("a zero in the denominator has no ratio")
	}
	if got := ratioCell(RangeOf([]float64{10, 12, 11}), RangeOf([]float64{5, 6, 4})); got != "2.20 (1.67–3.00)" {
		t.Errorf("cell %q", got)
	}
}

// TestFullReportFromResults: the acceptance row of a suite is computed
// from its results (medians, ranges, ratio of medians), not typed.
func TestFullReportFromResults(t *testing.T) {
	out := t.TempDir()
	run := func(target string, aps float64, ev int, p99 float64) *Result {
		return &Result{Target: target, Mode: Parity, AdmissionsPerSecond: aps, Evictions: ev, WritesPerWorkload: 2,
			TimeToAdmission: map[string]Distribution{"small": {P99: p99}}}
	}
	dir := filepath.Join(out, "quick")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rs := []*Result{run("muster", 40, 1, 100), run("kueue", 20, 5, 200), run("muster", 44, 3, 90), run("kueue", 22, 4, 300), run("muster", 42, 2, 80), run("kueue", 21, 9, 100)}
	if err := writeResults(dir, rs); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(dir, "calibration-end.json"), &Calibration{LifecyclesPerSecond: 150, CreatesPerSecond: 600, PatchesPerSecond: 400}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 6, 18, 42, 0, 0, time.UTC)
	if err := writeJSON(filepath.Join(dir, calibrationsFile), []Calibrated{{At: at, Phase: "start", Calibration: Calibration{LifecyclesPerSecond: 180, CreatesPerSecond: 700, PatchesPerSecond: 490}}}); err != nil {
		t.Fatal(err)
	}
	spec := FullSpec{Targets: []Target{{Name: "muster"}, {Name: "kueue"}}, Modes: []string{Parity, Unthrottled}, Reps: 3}
	if n, err := pendingRuns(spec, Suite{Name: "quick"}, dir); err != nil || n != 6 {
		t.Errorf("pending runs %d (%v), want the 6 unthrottled ones", n, err)
	}
	if n := runsDone(rs, "muster", Parity); n != 3 {
		t.Errorf("runs done %d, want 3 (a resumed comparison runs none again)", n)
	}
	report, err := FullReport(out, []Suite{{Name: "quick", Config: "../configs/smoke.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| quick | parity | 3 + 3 | 2.00 (1.82–2.20) | 2 (1–3) | 5 (4–9) | 2.00 (2.00–2.00); 0.00; 0.00 (0.00–0.00) |", "### quick, parity (3 Muster runs, 3 Kueue runs)",
		"- quick, API server calibration-end: 150.0 workload lifecycles/s (600 creates/s, 400 status writes/s)",
		"- quick, API server at the start of runs (2026-12-06 18:42 UTC): 180.0 workload lifecycles/s (700 creates/s, 490 status writes/s)"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

func TestUpdateDoc(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	doc := "# Doc\n" + docBegin + "\nold table\n" + docEnd + "\nafter\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := UpdateDoc(path, "new table"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "# Doc\n" + docBegin + "\nnew table\n" + docEnd + "\nafter\n"; string(got) != want {
		t.Errorf("got %q", got)
	}
	if err := os.WriteFile(path, []byte("no markers"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := UpdateDoc(path, "x"); err == nil {
		t.Error("a document without markers is refused")
	}
}

// TestQueueStatusWrites: the writes of queue status, apart from the rest.
func TestQueueStatusWrites(t *testing.T) {
	r := &Result{Workloads: 10, Requests: Requests{ByResource: map[string]int{
		"patch workloads/status": 10, "create events": 10, "patch clusterqueues/status": 3,
		"update localqueues/status": 2, "get clusterqueues": 7,
	}}}
	if got := r.QueueStatusWritesPerWorkload(); got != 0.5 {
		t.Errorf("queue status writes per workload = %v, want 0.5", got)
	}
}

// TestWorkloadWrites: a Workload's own writes are its object's, its
// status's and the events', whatever the verb; reads and queues are not.
func TestWorkloadWrites(t *testing.T) {
	r := &Result{Workloads: 10, Requests: Requests{ByResource: map[string]int{
		"patch workloads/status": 10, "create events": 10, "patch events": 1, "update workloads": 2,
		"patch clusterqueues/status": 3, "get workloads": 7, "watch events": 1,
	}}}
	if got := r.WorkloadWritesPerWorkload(); got != 2.3 {
		t.Errorf("the Workload's own writes per workload = %v, want 2.3", got)
	}
}

// TestFullStartByPassed: once the last start time has passed, a suite with
// runs left starts none and is not calibrated (no API server is started),
// and the report of what is recorded is still written, for the next
// invocation to resume from.
func TestFullStartByPassed(t *testing.T) {
	out := t.TempDir()
	dir := filepath.Join(out, "quick")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rs := []*Result{{Target: "muster", Mode: Parity, AdmissionsPerSecond: 40}, {Target: "kueue", Mode: Parity, AdmissionsPerSecond: 20}}
	if err := writeResults(dir, rs); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	spec := FullSpec{Suites: []Suite{{Name: "quick", Config: "../configs/smoke.yaml"}}, Targets: []Target{{Name: "muster"}, {Name: "kueue"}},
		Modes: []string{Parity}, Reps: 3, Out: out, Log: &log, StartBy: time.Now().Add(-time.Minute)}
	if err := Full(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, calibrationsFile)); !os.IsNotExist(err) {
		t.Errorf("a suite that starts no run was calibrated (%v)", err)
	}
	if !strings.Contains(log.String(), "no run starts after") {
		t.Errorf("log does not say why nothing ran:\n%s", log.String())
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Errorf("no report: %v", err)
	}
}

// TestCompareStartByPassed: a comparison past its last start time runs
// nothing more and writes the report of the runs it has.
func TestCompareStartByPassed(t *testing.T) {
	out := t.TempDir()
	cfg, err := LoadConfig("../configs/smoke.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := writeResults(out, []*Result{{Target: "muster", Mode: Parity, AdmissionsPerSecond: 40}}); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	spec := CompareSpec{Config: cfg, ConfigName: "smoke.yaml", Targets: []Target{{Name: "muster"}, {Name: "kueue"}}, Modes: []string{Parity},
		Reps: 2, Out: out, Log: &log, Resume: true, StartBy: time.Now().Add(-time.Second)}
	if err := Compare(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	rs, err := LoadResults(out)
	if err != nil || len(rs) != 1 {
		t.Errorf("results %d (%v), want the 1 recorded", len(rs), err)
	}
	if _, err := os.Stat(filepath.Join(out, "results.md")); err != nil {
		t.Errorf("no report: %v", err)
	}
}

// TestResultsKeepSamplesApart: results.json holds the figures only, so a
// long comparison's record can be kept in the repository; the samples
// beside it come back for the plot, and a record without them still
// loads, resumes and reports.
func TestResultsKeepSamplesApart(t *testing.T) {
	dir := t.TempDir()
	rs := []*Result{
		{Target: "muster", Mode: Parity, AdmissionsPerSecond: 40, Samples: map[string][]float64{"small": {1, 2}}},
		{Target: "kueue", Mode: Parity, AdmissionsPerSecond: 30, Samples: map[string][]float64{"small": {3}}},
	}
	if err := writeResults(dir, rs); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, resultsFile))
	if err != nil || strings.Contains(string(data), "samples") {
		t.Fatalf("results.json has samples (%v):\n%s", err, data)
	}
	got, err := LoadResults(dir)
	if err != nil || len(got) != 2 || len(got[0].Samples["small"]) != 2 || got[1].Samples["small"][0] != 3 {
		t.Fatalf("loaded %+v (%v), want both runs with their samples", got, err)
	}
	if err := writeJSON(filepath.Join(dir, resultsFile), []Result{{Target: "kueue", Mode: Parity}}); err != nil {
		t.Fatal(err)
	}
	if got, err = LoadResults(dir); err != nil || len(got) != 1 || got[0].Samples != nil {
		t.Fatalf("a run set aside by hand: %+v (%v), want no samples (whose are they?)", got, err)
	}
	if err := writeResults(dir, rs); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, samplesFile)); err != nil {
		t.Fatal(err)
	}
	got, err = LoadResults(dir)
	if err != nil || len(got) != 2 || got[0].Samples != nil || got[0].AdmissionsPerSecond != 40 {
		t.Fatalf("without samples.json: %+v (%v), want the figures alone", got, err)
	}
	if n := runsDone(got, "kueue", Parity); n != 1 {
		t.Errorf("runs done %d, want 1: a kept record resumes", n)
	}
}

// TestBuildOfAnUnstampedBinary: a binary Go stamped no commit into (or
// none at all) records no build rather than failing the run.
func TestBuildOfAnUnstampedBinary(t *testing.T) {
	if b := buildOf(filepath.Join(t.TempDir(), "missing")); b != "" {
		t.Errorf("missing binary: build %q", b)
	}
	if b := buildOf(os.Args[0]); strings.Contains(b, " ") {
		t.Errorf("test binary: build %q", b)
	}
}
