package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// The smoke tests run the harness end to end in seconds: real API servers
// (KUBEBUILDER_ASSETS), the real Muster and Kueue binaries from
// `make bench-bins`. They check the harness works, not how fast anything is.

func targets(t *testing.T) []Target {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run through make test")
	}
	root := repoRoot(t)
	ts := []Target{
		Muster(filepath.Join(root, "bin/muster"), filepath.Join(root, "config/crd/bases")),
		Kueue(filepath.Join(root, "bin/bench/kueue-bench"), filepath.Join(root, "bin/bench/kueue-crds")),
	}
	for _, tg := range ts {
		if _, err := os.Stat(tg.Binary); err != nil {
			t.Fatalf("%s: run make bench-bins first", err)
		}
	}
	return ts
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestSmokeCompare(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	cfg, err := LoadConfig(filepath.Join(repoRoot(t), "test/bench/configs/smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err = Compare(ctx, CompareSpec{Config: cfg, ConfigName: "smoke.yaml", Targets: targets(t),
		Modes: []string{Parity}, Reps: 1, Out: out, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}

	var results []*Result
	data, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want one per target", len(results))
	}
	want := cfg.Plan().Workloads()
	for _, r := range results {
		if r.Workloads != want || r.Finished != want {
			t.Errorf("%s: %d of %d workloads finished, want all %d", r.Target, r.Finished, r.Workloads, want)
		}
		for _, class := range []string{"small", "medium", "large"} {
			if d := r.TimeToAdmission[class]; d.Count == 0 || d.Max < d.P50 {
				t.Errorf("%s: class %s: %+v", r.Target, class, d)
			}
		}
		if r.AdmissionsPerSecond <= 0 || r.Utilization <= 0 || r.Utilization > 1 {
			t.Errorf("%s: %.1f admissions/s, utilization %.2f", r.Target, r.AdmissionsPerSecond, r.Utilization)
		}
		if r.MachineBusy <= 0 || r.MachineBusy > 1 || r.HarnessCPUSeconds <= 0 {
			t.Errorf("%s: machine busy %.2f, harness CPU %.1f s", r.Target, r.MachineBusy, r.HarnessCPUSeconds)
		}
		// Where the harness may raise it, the control plane runs ahead of
		// the rest; otherwise the run says it did not.
		if want := niceAllowed(t); r.ControlPlaneNice != want {
			t.Errorf("%s: control plane at nice %d, want %d", r.Target, r.ControlPlaneNice, want)
		}
		if r.Target == "kueue" && !strings.HasPrefix(r.Build, "kueue v") {
			t.Errorf("kueue: build %q, want Kueue's module version", r.Build)
		}
		if r.Usage.CPUSeconds <= 0 || r.Usage.MaxRSSMiB <= 0 || !r.Usage.MaxRSSOwn {
			t.Errorf("%s: no CPU time or own peak RSS of the child: %+v", r.Target, r.Usage)
		}
		// The API server's own metrics: every workload was created, so
		// writes were served and timed (in-flight peaks are sampled and
		// may miss a short run's load).
		if l := r.APIServer; l == nil || l.Samples < 2 || l.MutatingPerSecond <= 0 || l.MutatingP99 <= 0 {
			t.Errorf("%s: API server load not measured: %+v", r.Target, l)
		} else if l.WorkloadWatchCache < 12800 {
			t.Errorf("%s: Workload watch cache of %v events at the start, want the warm-up's 12,800 or more", r.Target, l.WorkloadWatchCache)
		}
		// Every admission is at least one status write by the target.
		if r.Requests.ByResource["patch workloads/status"]+r.Requests.ByResource["update workloads/status"]+r.Requests.ByResource["apply workloads/status"] < want {
			t.Errorf("%s: fewer workload status writes than workloads: %v", r.Target, r.Requests.ByResource)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "results.md"))
	if err != nil || !strings.Contains(string(md), "| metric | Muster | Kueue | Muster/Kueue |") || !strings.Contains(string(md), "API server write latency p99") {
		t.Fatalf("results.md: %v\n%s", err, md)
	}
	f, err := os.Open(filepath.Join(out, "time-to-admission.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("the plot is not a PNG: %v", err)
	}
}

func TestSmokeCalibration(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	ts := targets(t)
	cal, err := Calibrate(context.Background(), ts[0].CRDDir, t.TempDir(), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Levels) != len(CalibrationConcurrency) || cal.CreatesPerSecond <= 0 || cal.PatchesPerSecond <= 0 || cal.LifecyclesPerSecond <= 0 {
		t.Fatalf("calibration: %+v", cal)
	}
}

func TestSmokeSweep(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	p := SweepParams{Probes: 5, ProbeInterval: 50 * time.Millisecond, IdleWindow: 2 * time.Second,
		SettleQuiet: 2 * time.Second, SettleCap: time.Minute, CreateParallel: 4}
	for _, tg := range targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			r, err := Sweep(context.Background(), tg, 50, Unthrottled, t.TempDir(), p)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Settled || r.Probe.Count != p.Probes || r.MaxRSSMiB <= 0 {
				t.Fatalf("sweep: %+v", r)
			}
		})
	}
}

// TestSmokeTASObjects creates the TAS quick mix's objects (nodes, Topology,
// flavor, queues, one Workload of every class) against each target's CRDs:
// their validation (Muster's CEL rules included) accepts what the harness
// writes, and the nodes end up Ready and untainted.
func TestSmokeTASObjects(t *testing.T) {
	cfg, err := LoadConfig(filepath.Join(repoRoot(t), "test/bench/configs/tas-quick.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plan := cfg.Plan()
	for _, tg := range targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			api, err := StartAPIServer(t.TempDir(), tg.CRDDir)
			if err != nil {
				t.Fatal(err)
			}
			defer api.Stop()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := api.waitEstablished(ctx, tg); err != nil {
				t.Fatal(err)
			}
			if err := createQueues(ctx, api, tg, plan); err != nil {
				t.Fatal(err)
			}
			q := plan.Queues[0]
			for si, set := range q.Sets {
				for _, wt := range set.Workloads {
					if err := create(ctx, api, tg.Resource("Workload"), tg.Workload(q.Name, fmt.Sprintf("%s-%d", wt.ClassName, si), q.Name, wt)); err != nil {
						t.Fatal(err)
					}
				}
			}
			node, err := api.Dynamic.Resource(nodes).Get(ctx, plan.Topology.Nodes[0].Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			taints, _, _ := unstructured.NestedSlice(node.Object, "spec", "taints")
			cpu, _, _ := unstructured.NestedString(node.Object, "status", "allocatable", "cpu")
			if len(taints) != 0 || cpu != "8" || !nodeReady(node) {
				t.Fatalf("node: taints %v, allocatable cpu %q, status %v", taints, cpu, node.Object["status"])
			}
		})
	}
}

func nodeReady(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}
