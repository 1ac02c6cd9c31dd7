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

// TestReadsKueuesOwnGeneratorFile loads Kueue v0.19.2's baseline generator
// file from the module cache, unchanged, and expects the same plan as ours.
func TestReadsKueuesOwnGeneratorFile(t *testing.T) {
	theirs, err := LoadConfig(filepath.Join(kueueModule(t), "test/performance/scheduler/configs/baseline/generator.yaml"))
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

// kueueModule is Kueue's module directory in the module cache.
func kueueModule(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue")
	cmd.Dir = filepath.Join(repoRoot(t), "test/bench/kueue")
	dir, err := cmd.Output()
	if err != nil {
		t.Fatalf("finding Kueue's module (make bench-bins downloads it): %v", err)
	}
	return strings.TrimSpace(string(dir))
}

func TestConfigErrors(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"unknown field":   {"cohorts:\n- className: c\n  count: 1\n  bogus: 1\n", "unknown field"},
		"no cohorts":      {"cohorts: []\n", "no cohorts"},
		"topology alone":  {"topology: {name: t}\ncohorts:\n- {className: c, count: 1}\n", "resourceFlavor"},
		"one level":       {"topology: {name: t, levels: [{name: n, count: 1, nodeLabel: kubernetes.io/hostname}]}\nresourceFlavor: {name: f, nodeLabel: g, topologyName: t}\ncohorts:\n- {className: c, count: 1}\n", "two levels"},
		"no hostname":     {"topology: {name: t, levels: [{name: b, count: 1, nodeLabel: b}, {name: r, count: 1, nodeLabel: r}]}\nresourceFlavor: {name: f, nodeLabel: g, topologyName: t}\ncohorts:\n- {className: c, count: 1}\n", "hostname"},
		"no node label":   {"topology: {name: t, levels: [{name: b, count: 1, nodeLabel: b}, {name: n, count: 1, nodeLabel: kubernetes.io/hostname}]}\nresourceFlavor: {name: f, topologyName: t}\ncohorts:\n- {className: c, count: 1}\n", "nodeLabel"},
		"dangling name":   {"resourceFlavor: {name: f, topologyName: t}\ncohorts:\n- {className: c, count: 1}\n", "names no topology"},
		"negative quota":  {"cohorts:\n- className: c\n  count: 1\n  queuesSets:\n  - {className: q, count: 1, nominalQuota: -1}\n", "negative"},
		"bad policy":      {"cohorts:\n- className: c\n  count: 1\n  queuesSets:\n  - {className: q, count: 1, nominalQuota: 1, withinClusterQueue: Sometimes}\n", "preemption policy"},
		"zero request":    {"cohorts:\n- className: c\n  count: 1\n  queuesSets:\n  - className: q\n    count: 1\n    nominalQuota: 1\n    workloadsSets:\n    - count: 1\n      workloads: [{className: w, request: 0}]\n", "positive request"},
		"tas constraint":  {"cohorts:\n- className: c\n  count: 1\n  queuesSets:\n  - className: q\n    count: 1\n    nominalQuota: 1\n    workloadsSets:\n    - count: 1\n      workloads: [{className: w, request: 1, tasConstraint: required}]\n", "need a topology"},
		"bad constraint":  {tasTemplate("{className: w, request: 1, tasConstraint: sometimes, tasLevel: r}"), "not one of"},
		"bad level":       {tasTemplate("{className: w, request: 1, tasConstraint: required, tasLevel: x}"), "not a level"},
		"slice size":      {tasTemplate("{className: w, request: 1, podCount: 3, tasConstraint: balanced, tasLevel: r, sliceSize: 2}"), "sliceSize"},
		"no slice size":   {tasTemplate("{className: w, request: 1, podCount: 2, tasConstraint: balanced, tasLevel: r}"), "sliceSize"},
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

// tasTemplate is a valid topology-aware mix around one workload template.
func tasTemplate(workload string) string {
	return "topology: {name: t, levels: [{name: rack, count: 2, nodeLabel: r}, {name: node, count: 2, nodeLabel: kubernetes.io/hostname}]}\n" +
		"resourceFlavor: {name: f, nodeLabel: g, topologyName: t}\n" +
		"cohorts:\n- className: c\n  count: 1\n  queuesSets:\n  - className: q\n    count: 1\n    nominalQuota: 1\n    workloadsSets:\n" +
		"    - count: 1\n      workloads: [" + workload + "]\n"
}

func TestTASIsKueuesMix(t *testing.T) {
	cfg, err := LoadConfig(filepath.Join(repoRoot(t), "test/bench/configs/tas.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plan := cfg.Plan()
	if len(plan.Queues) != 30 || plan.Workloads() != 15000 || plan.Capacity() != 600_000 || len(plan.Classes) != 9 {
		t.Fatalf("tas: %d queues, %d workloads, %d millicores, %d classes; want 30, 15000, 600000, 9",
			len(plan.Queues), plan.Workloads(), plan.Capacity(), len(plan.Classes))
	}
	topo := plan.Topology
	if topo == nil || len(topo.Nodes) != 640 || !reflect.DeepEqual(topo.Levels, []string{"example.com/block", "example.com/rack", "kubernetes.io/hostname"}) {
		t.Fatalf("topology %+v", topo)
	}
	n := topo.Nodes[64*2+15]
	want := map[string]string{"example.com/block": "block-0", "example.com/rack": "rack-2", "kubernetes.io/hostname": "node-b0-r2-n15", "tas-node-group": "tas"}
	if n.Name != "node-b0-r2-n15" || !reflect.DeepEqual(n.Labels, want) || n.Allocatable.Cpu().String() != "96" ||
		n.Allocatable.Memory().String() != "256Gi" || n.Allocatable.Pods().Value() != 110 {
		t.Fatalf("node %+v", n)
	}
	quick, err := LoadConfig(filepath.Join(repoRoot(t), "test/bench/configs/tas-quick.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if qp := quick.Plan(); len(qp.Topology.Nodes) != 64 || qp.Workloads() != 330 || !reflect.DeepEqual(qp.Classes, plan.Classes) {
		t.Fatalf("tas-quick: %d nodes, %d workloads, classes %v", len(qp.Topology.Nodes), qp.Workloads(), qp.Classes)
	}
}

// TestReadsKueuesOwnTASFile loads Kueue v0.19.2's TAS generator file and
// expects our queues, workloads and nodes (ours only rename its labels).
func TestReadsKueuesOwnTASFile(t *testing.T) {
	theirs, err := LoadConfig(filepath.Join(kueueModule(t), "test/performance/scheduler/configs/tas/generator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := LoadConfig(filepath.Join(repoRoot(t), "test/bench/configs/tas.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tp, op := theirs.Plan(), ours.Plan()
	if !reflect.DeepEqual(tp.Classes, op.Classes) || tp.Workloads() != op.Workloads() || len(tp.Queues) != len(op.Queues) ||
		len(tp.Topology.Nodes) != len(op.Topology.Nodes) || tp.Topology.Nodes[100].Name != op.Topology.Nodes[100].Name {
		t.Fatal("Kueue's TAS generator file and ours differ")
	}
	for i := range tp.Queues {
		for j, set := range tp.Queues[i].Sets {
			for k, wt := range set.Workloads {
				o := op.Queues[i].Sets[j].Workloads[k]
				if wt.ClassName != o.ClassName || wt.PodCount != o.PodCount || wt.Request.Cmp(o.Request) != 0 ||
					wt.TASConstraint != o.TASConstraint || wt.SliceSize != o.SliceSize || set.Count != op.Queues[i].Sets[j].Count {
					t.Fatalf("queue %d set %d: %+v, ours %+v", i, j, wt, o)
				}
			}
		}
	}
}

// TestLargeScaleIsKueuesOwn: the large-scale mix is Kueue v0.19.2's
// generator file, unchanged in what it plans.
func TestLargeScaleIsKueuesOwn(t *testing.T) {
	theirs, err := LoadConfig(filepath.Join(kueueModule(t), "test/performance/scheduler/configs/large-scale/generator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := LoadConfig(filepath.Join(repoRoot(t), "test/bench/configs/large-scale.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(theirs.Plan(), ours.Plan()) {
		t.Fatal("Kueue's large-scale generator file and ours differ")
	}
	if n := len(ours.Plan().Queues); n != 1000 {
		t.Fatalf("%d ClusterQueues, want 1,000", n)
	}
}

// TestSteadyIsSpreadOverTenMinutes: the steady mixes arrive evenly, every
// set over 10 minutes (±1%): steady.yaml at ~143 workloads/s in all, 80%
// of the calibrated ceiling of 179 workload lifecycles/s, and
// steady-half.yaml at ~89/s, 50% of it.
func TestSteadyIsSpreadOverTenMinutes(t *testing.T) {
	for _, tc := range []struct {
		file     string
		fraction float64
		total    int
	}{{"steady.yaml", 0.80, 85530}, {"steady-half.yaml", 0.50, 53490}} {
		t.Run(tc.file, func(t *testing.T) { checkSteady(t, tc.file, tc.fraction, tc.total) })
	}
}

func checkSteady(t *testing.T, file string, fraction float64, total int) {
	cfg, err := LoadConfig(filepath.Join(repoRoot(t), "test/bench/configs", file))
	if err != nil {
		t.Fatal(err)
	}
	plan := cfg.Plan()
	rate := 0.0
	for _, q := range plan.Queues {
		for _, set := range q.Sets {
			span := float64(set.Count) * float64(set.CreationIntervalMs) / 1000
			if span < 594 || span > 606 {
				t.Errorf("%s: a set arrives over %.0f s, want 600", q.Name, span)
			}
			rate += 1000 / float64(set.CreationIntervalMs)
		}
	}
	if rate < (fraction-0.02)*179.1 || rate > (fraction+0.02)*179.1 {
		t.Errorf("arrivals at %.1f/s, want ~%.0f%% of 179.1", rate, fraction*100)
	}
	if n := plan.Workloads(); n != total {
		t.Errorf("%d workloads, want %d", n, total)
	}
}

// The node-fit mix is the quick mix with nodes that only Muster's flavor
// checks: no topology-aware fields, the same queues and workloads.
func TestNodeFitMixIsTheQuickMixWithNodes(t *testing.T) {
	load := func(name string) Plan {
		cfg, err := LoadConfig(filepath.Join(repoRoot(t), "test/bench/configs", name))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Plan()
	}
	quick, nodefit := load("quick.yaml"), load("quick-nodefit.yaml")
	if nodefit.TopologyAware || nodefit.NodeFit != "Check" || nodefit.Topology == nil || len(nodefit.Topology.Nodes) != 16 {
		t.Fatalf("node-fit plan: aware %t, nodeFit %q, topology %+v", nodefit.TopologyAware, nodefit.NodeFit, nodefit.Topology)
	}
	if nodefit.Workloads() != quick.Workloads() || len(nodefit.Queues) != len(quick.Queues) || !reflect.DeepEqual(nodefit.Classes, quick.Classes) {
		t.Fatalf("node-fit mix differs from the quick mix: %d/%d workloads, %d/%d queues", nodefit.Workloads(), quick.Workloads(), len(nodefit.Queues), len(quick.Queues))
	}
	rf := Target{Name: "muster"}.ResourceFlavor(nodefit)
	if spec := rf.Object["spec"].(map[string]any); spec["nodeFit"] != "Check" || spec["topologyName"] != nil {
		t.Errorf("Muster's flavor %v", spec)
	}
	if spec := (Target{Name: "kueue"}).ResourceFlavor(nodefit).Object["spec"].(map[string]any); spec["nodeFit"] != nil || spec["topologyName"] != nil {
		t.Errorf("Kueue's flavor %v", spec)
	}
}
