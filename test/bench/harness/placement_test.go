package harness

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func decode(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMusterPlacement(t *testing.T) {
	ta := decode(t, `
levels: [example.com/block, example.com/rack, kubernetes.io/hostname]
domains:
- {values: [block-0, rack-1], leaves: [n1, n2], count: 2}
- {values: [block-0, rack-2], leaves: [n3, n4], counts: [1, 3]}
`)
	got, err := musterPlacement(ta)
	want := []NodePods{{"n1", 2}, {"n2", 2}, {"n3", 1}, {"n4", 3}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	if _, err := musterPlacement(decode(t, "levels: [example.com/rack]\ndomains: [{leaves: [r1], count: 1}]")); err == nil {
		t.Fatal("leaves that are racks, not nodes, must be an error")
	}
}

// TestKueuePlacement covers both of Kueue's encodings of a level's values
// and of the pod counts.
func TestKueuePlacement(t *testing.T) {
	ta := decode(t, `
levels: [kubernetes.io/hostname]
slices:
- domainCount: 2
  valuesPerLevel: [{individual: {prefix: node-b0-r, roots: ["1-n1", "1-n2"]}}]
  podCounts: {universal: 2}
- domainCount: 1
  valuesPerLevel: [{universal: node-b0-r3-n0}]
  podCounts: {individual: [4]}
`)
	got, err := kueuePlacement(ta)
	want := []NodePods{{"node-b0-r1-n1", 2}, {"node-b0-r1-n2", 2}, {"node-b0-r3-n0", 4}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
}

// smallTopology is 2 racks of 2 nodes of 4 cpu, named as musterPlacement
// reads them.
func smallTopology(t *testing.T) *TopologyPlan {
	t.Helper()
	cfg, err := ParseConfig([]byte(`
topology:
  name: t
  levels:
  - {name: rack, count: 2, nodeLabel: r}
  - {name: node, count: 2, nodeLabel: kubernetes.io/hostname, capacity: {cpu: "4", memory: 8Gi}}
resourceFlavor: {name: f, nodeLabel: g, topologyName: t}
cohorts:
- {className: c, count: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Plan().Topology
}

func placementOn(leaves ...any) map[string]any {
	var domains []any
	for i := 0; i < len(leaves); i += 2 {
		domains = append(domains, map[string]any{"leaves": []any{leaves[i]}, "count": int64(leaves[i+1].(int))})
	}
	return map[string]any{"levels": []any{"r", "kubernetes.io/hostname"}, "domains": domains}
}

func TestPlacementsCountOverPlacementsWhileHeld(t *testing.T) {
	p := NewPlacements(Muster("", ""), smallTopology(t))
	now := time.Now()
	wt := WorkloadTemplate{ClassName: "w", Request: resource.MustParse("1500m"), PodCount: 2}
	for _, k := range []string{"a", "b", "c"} {
		p.Expect(k, wt)
	}
	// a and b: 3 cpu on each node of rack 0 (4 cpu each); c adds 1.5 to both.
	p.Observe("a", true, false, placementOn("node-r0-n0", 2), now)
	p.Observe("a", true, false, placementOn("node-r0-n0", 2), now) // a later version changes nothing
	p.Observe("b", true, false, placementOn("node-r0-n1", 2), now)
	if s := p.Stats(); s.OverPlacements != 0 || s.Admissions != 2 {
		t.Fatalf("3 cpu on a 4-cpu node is no over-placement: %+v", s)
	}
	p.Observe("b", true, true, placementOn("node-r0-n1", 2), now) // being evicted: still holds its node
	p.Observe("c", true, false, placementOn("node-r0-n0", 1, "node-r0-n1", 1), now)
	if s := p.Stats(); s.OverPlacements != 2 || s.PeakNodeCPU != 1.125 {
		t.Fatalf("4.5 cpu on both nodes of rack 0: %+v", s)
	}
	if e := p.Stats().Examples; len(e) != 2 || !strings.Contains(e[1], "b (2 pods since") || !strings.Contains(e[1], ", evicted)") {
		t.Fatalf("examples name the holders and whether they are being evicted: %q", e)
	}
	// Once a is released there is room again.
	p.Observe("a", false, false, nil, now)
	p.Observe("c", false, false, nil, now)
	p.Observe("c", true, false, placementOn("node-r0-n0", 2), now)
	if s := p.Stats(); s.OverPlacements != 2 {
		t.Fatalf("released usage still counted: %+v", s)
	}
}

func TestPlacementsCheckRequiredAndValidity(t *testing.T) {
	p := NewPlacements(Muster("", ""), smallTopology(t))
	now := time.Now()
	req := WorkloadTemplate{ClassName: "w", Request: resource.MustParse("1"), PodCount: 2, TASConstraint: "required", TASLevel: "r"}
	for _, k := range []string{"split", "none", "ghost", "short", "ok"} {
		p.Expect(k, req)
	}
	p.Observe("split", true, false, placementOn("node-r0-n0", 1, "node-r1-n0", 1), now)
	p.Observe("none", true, false, nil, now)
	p.Observe("ghost", true, false, placementOn("node-r9-n9", 2), now)
	p.Observe("short", true, false, placementOn("node-r0-n1", 1), now)
	p.Observe("ok", true, false, placementOn("node-r1-n0", 1, "node-r1-n1", 1), now)
	s := p.Stats()
	if s.Admissions != 5 || s.RequiredViolations != 1 || s.Unplaced != 1 || s.Invalid != 2 || s.OverPlacements != 0 {
		t.Fatalf("%+v", s)
	}
	// Releasing what held nothing must not drive usage negative.
	p.Observe("ghost", false, false, nil, now)
	p.Observe("none", false, false, nil, now)
	if s := p.Stats(); s.Admissions != 5 {
		t.Fatalf("%+v", s)
	}
}

func TestTopologyRequests(t *testing.T) {
	wt := func(c string) WorkloadTemplate {
		return WorkloadTemplate{TASConstraint: c, TASLevel: "example.com/rack", SliceSize: 2}
	}
	cases := []struct {
		target     func(WorkloadTemplate) map[string]any
		constraint string
		want       map[string]any
	}{
		{musterTopologyRequest, "required", map[string]any{"required": "example.com/rack"}},
		{musterTopologyRequest, "preferred", map[string]any{"preferred": "example.com/rack"}},
		{musterTopologyRequest, "balanced", map[string]any{"podSetSliceRequiredTopology": "example.com/rack", "podSetSliceSize": int64(2)}},
		{kueueTopologyRequest, "required", map[string]any{"required": "example.com/rack"}},
		{kueueTopologyRequest, "preferred", map[string]any{"preferred": "example.com/rack"}},
		{kueueTopologyRequest, "balanced", map[string]any{"podSetSliceRequiredTopology": "example.com/rack", "podSetSliceSize": int64(2)}},
	}
	for _, c := range cases {
		if got := c.target(wt(c.constraint)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.constraint, got, c.want)
		}
	}
}

// workloadAt is a Workload as the API server returns it: admitted with the
// placement, or (placement nil) finished and released, at resource version rv.
func workloadAt(key, rv string, placement map[string]any) unstructured.Unstructured {
	ns, name, _ := strings.Cut(key, "/")
	u := unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": rv}}}
	if placement == nil {
		u.Object["status"] = map[string]any{"conditions": []any{map[string]any{
			"type": "Finished", "status": "True", "reason": "Succeeded", "message": "", "lastTransitionTime": "2026-12-06T18:57:27Z"}}}
		return u
	}
	u.Object["status"] = map[string]any{"admission": map[string]any{"podSetAssignments": []any{
		map[string]any{"topologyAssignment": placement}}}}
	return u
}

// TestPlacementsSnapshotReleasesFirst: a list (after the check's watch
// lost its place) is one state; taken workload by workload in key order, a
// workload admitted onto a node another had since left shows both on it
// at once — the false over-placement an informer's relist produced in a
// TAS run. Released holders go first; one gone from the list, or placed
// elsewhere now, lets go too.
func TestPlacementsSnapshotReleasesFirst(t *testing.T) {
	p := NewPlacements(Muster("", ""), smallTopology(t))
	wt := WorkloadTemplate{ClassName: "w", Request: resource.MustParse("2"), PodCount: 2}
	for _, k := range []string{"ns/a-new", "ns/b-old", "ns/c-gone", "ns/d-moved"} {
		p.Expect(k, wt)
	}
	now := time.Now()
	p.Observe("ns/b-old", true, true, placementOn("node-r0-n0", 2), now) // 4 cpu: the node is full
	p.Observe("ns/c-gone", true, false, placementOn("node-r0-n1", 2), now)
	p.Observe("ns/d-moved", true, false, placementOn("node-r1-n0", 2), now)
	p.observeSnapshot([]unstructured.Unstructured{
		workloadAt("ns/a-new", "120", placementOn("node-r0-n0", 2)), // admitted after b-old left
		workloadAt("ns/b-old", "130", nil),
		workloadAt("ns/d-moved", "125", placementOn("node-r0-n1", 2)), // requeued and admitted where c was
	})
	if s := p.Stats(); s.OverPlacements != 0 || s.Admissions != 5 || s.PeakNodeCPU != 1 {
		t.Fatalf("released, deleted and moved holders let go before admissions: %+v", s)
	}
	if _, held := p.holding["ns/c-gone"]; held || len(p.holding) != 2 {
		t.Fatalf("holders after the snapshot: %v", p.holding)
	}
}

func TestPlacementsCatchUp(t *testing.T) {
	p := NewPlacements(Muster("", ""), smallTopology(t))
	p.seen("100")
	ctx := context.Background()
	p.CatchUp(ctx, "100", time.Minute)
	if p.Stats().Behind {
		t.Fatal("seen 100, caught up with 100")
	}
	p.CatchUp(ctx, "101", 0)
	if !p.Stats().Behind {
		t.Fatal("never saw 101: behind")
	}
}
