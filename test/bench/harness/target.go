package harness

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Labels the generator puts on every Workload, read back by the fake
// kubelet and the recorder.
const (
	ClassLabel   = "bench.muster.dev/class"
	RuntimeLabel = "bench.muster.dev/runtime-ms"
)

// Target is a system under test: how to run it and how its API spells the
// objects both systems share. Both APIs descend from the same design, so the
// objects differ only in group, version and a few field names; the harness
// writes them as unstructured objects and never imports either system.
type Target struct {
	// Name is "muster" or "kueue".
	Name string
	// Binary runs the controller; CRDDir holds its CRDs.
	Binary, CRDDir string
	// GroupVersion of its API.
	GroupVersion schema.GroupVersion
	// cohortField is the ClusterQueue field that names the cohort.
	cohortField string
	// args writes any files the binary needs into l.Dir and returns its
	// command line.
	args func(l Launch) ([]string, error)
	// requeueConditions are what the system's own job integration writes
	// when it has stopped an evicted job and hands the quota back.
	requeueConditions []metav1.Condition
	// topologyRequest spells a workload's topology constraint in the
	// target's PodSetTopologyRequest.
	topologyRequest func(wt WorkloadTemplate) map[string]any
	// placement decodes a pod set assignment's topologyAssignment into
	// pods per node.
	placement func(ta map[string]any) ([]NodePods, error)
	// multiCluster spells the multi-cluster dispatch in the target's API.
	multiCluster multiClusterAPI
}

// multiClusterAPI is how a target spells the multi-cluster dispatch:
// MultiCluster (Muster) or MultiKueueCluster (Kueue) and their configs,
// the check's controller, the job's managedBy and queue label.
type multiClusterAPI struct {
	clusterKind, configKind, controller, managedBy, queueLabel string
	// clusterSpec is a worker's spec, reading the kubeconfig from a Secret.
	clusterSpec func(secret string) map[string]any
}

// Muster is the Muster manager binary (cmd/muster) with the CRDs in crdDir.
func Muster(binary, crdDir string) Target {
	return Target{
		Name: "muster", Binary: binary, CRDDir: crdDir,
		GroupVersion:    schema.GroupVersion{Group: "muster.dev", Version: "v1beta1"},
		cohortField:     "cohort",
		args:            musterArgs,
		topologyRequest: musterTopologyRequest,
		placement:       musterPlacement,
		multiCluster: multiClusterAPI{
			clusterKind: "MultiCluster", configKind: "MultiClusterConfig", controller: "muster.dev/multicluster",
			managedBy: "muster.dev/multicluster", queueLabel: "muster.dev/queue-name",
			clusterSpec: func(secret string) map[string]any {
				return map[string]any{"kubeConfig": map[string]any{"location": secret, "locationType": "Secret"}}
			},
		},
		requeueConditions: []metav1.Condition{
			{Type: "QuotaReserved", Status: metav1.ConditionFalse, Reason: "Pending", Message: "Requeued after eviction"},
			{Type: "Admitted", Status: metav1.ConditionFalse, Reason: "Evicted", Message: "Requeued after eviction"},
			{Type: "Requeued", Status: metav1.ConditionTrue, Reason: "Evicted", Message: "Requeued after eviction"},
		},
	}
}

// Kueue is test/bench/kueue (Kueue v0.19.2's controllers and scheduler) with
// Kueue's CRDs in crdDir.
func Kueue(binary, crdDir string) Target {
	return Target{
		Name: "kueue", Binary: binary, CRDDir: crdDir,
		GroupVersion:    schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"},
		cohortField:     "cohortName",
		args:            kueueArgs,
		topologyRequest: kueueTopologyRequest,
		placement:       kueuePlacement,
		multiCluster: multiClusterAPI{
			clusterKind: "MultiKueueCluster", configKind: "MultiKueueConfig", controller: "kueue.x-k8s.io/multikueue",
			managedBy: "kueue.x-k8s.io/multikueue", queueLabel: "kueue.x-k8s.io/queue-name",
			clusterSpec: func(secret string) map[string]any {
				return map[string]any{"clusterSource": map[string]any{"kubeConfig": map[string]any{"location": secret, "locationType": "Secret"}}}
			},
		},
		// What Kueue's job framework does: workload.UnsetQuotaReservationWithCondition.
		requeueConditions: []metav1.Condition{
			{Type: "QuotaReserved", Status: metav1.ConditionFalse, Reason: "Pending", Message: "Evicted by the benchmark's kubelet"},
			{Type: "Admitted", Status: metav1.ConditionFalse, Reason: "NoReservation", Message: "The workload has no reservation"},
		},
	}
}

// kueueArgs: for a topology-aware mix, Kueue's TAS controllers, and its
// balanced placement (alpha since v0.15 and still in v0.19, off by
// default), as Kueue's own TAS benchmark runs; the gate applies to the pod
// sets with a preferred request (musterArgs turns Muster's on alike).
func kueueArgs(l Launch) ([]string, error) {
	args := []string{"--kubeconfig", l.Kubeconfig, fmt.Sprintf("--qps=%g", l.QPS), fmt.Sprintf("--burst=%d", l.Burst),
		"--pprof-bind-address=" + l.Pprof}
	if l.TAS {
		args = append(args, "--enable-tas", "--feature-gates=TASBalancedPlacement=true")
	}
	if l.MultiClusterDispatcher != "" {
		certDir := filepath.Join(l.Dir, "certs")
		if err := writeSelfSignedCert(certDir); err != nil {
			return nil, err
		}
		args = append(args, "--multikueue", "--cert-dir="+certDir)
	}
	return args, nil
}

// musterArgs writes a Configuration: webhooks served on loopback with a
// self-signed certificate (nothing calls them: the harness installs no
// webhook configuration, like Kueue's scheduler-only binary has none),
// metrics and leader election off.
func musterArgs(l Launch) ([]string, error) {
	certDir := filepath.Join(l.Dir, "certs")
	if err := writeSelfSignedCert(certDir); err != nil {
		return nil, err
	}
	webhookAddr, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	probeAddr, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf(`apiVersion: config.muster.dev/v1beta1
kind: Configuration
namespace: default
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks: ["batch/job"]
clientConnection:
  qps: %g
  burst: %d
pprofBindAddress: %q
`, probeAddr, webhookAddr, certDir, l.QPS, l.Burst, l.Pprof)
	if d := l.MultiClusterDispatcher; d != "" {
		cfg += fmt.Sprintf("multiCluster:\n  dispatcher: %s\n", d)
	}
	if l.TAS {
		// As Kueue's TASBalancedPlacement gate, which kueueArgs turns on.
		cfg += "topologyAwareScheduling:\n  balancedPlacement: true\n"
	}
	path := filepath.Join(l.Dir, "muster-config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	args := []string{"--config", path, "--kubeconfig", l.Kubeconfig, "--zap-time-encoding=rfc3339nano"}
	if lvl := os.Getenv("BENCH_MUSTER_LOG_LEVEL"); lvl != "" {
		// To read a run's decisions one by one (2: debug).
		args = append(args, "--zap-log-level="+lvl)
	}
	return args, nil
}

func (t Target) gvk(kind string) schema.GroupVersionKind { return t.GroupVersion.WithKind(kind) }

// Resource is the plural resource of a kind of the target's API.
func (t Target) Resource(kind string) schema.GroupVersionResource {
	if kind == "Topology" {
		return t.GroupVersion.WithResource("topologies")
	}
	return t.GroupVersion.WithResource(strings.ToLower(kind) + "s")
}

func (t Target) object(kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(t.gvk(kind))
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// ResourceFlavor is the one flavor of the mix. With nodes it selects them
// by their flavor label, and names the topology in a topology-aware mix;
// in a node-fit mix Muster's checks the nodes (plan.NodeFit) and Kueue's
// admits on quota alone. Without nodes Muster's admits on quota alone too
// (node fit None), as Kueue's does.
func (t Target) ResourceFlavor(plan Plan) *unstructured.Unstructured {
	spec := map[string]any{}
	switch topo := plan.Topology; {
	case topo != nil:
		spec["nodeLabels"] = map[string]any{topo.FlavorLabel: flavorNodeValue}
		if plan.TopologyAware {
			spec["topologyName"] = topo.Name
		} else if t.Name == "muster" {
			spec["nodeFit"] = plan.NodeFit
		}
	case t.Name == "muster":
		spec["nodeFit"] = "None"
	}
	return t.object("ResourceFlavor", "", plan.Flavor, spec)
}

// Topology is the mix's Topology; both APIs spell it spec.levels[].nodeLabel.
func (t Target) Topology(topo *TopologyPlan) *unstructured.Unstructured {
	levels := make([]any, len(topo.Levels))
	for i, l := range topo.Levels {
		levels[i] = map[string]any{"nodeLabel": l}
	}
	return t.object("Topology", "", topo.Name, map[string]any{"levels": levels})
}

// ClusterQueue mirrors Kueue's generator: cpu only on one flavor, the
// cohort, both preemption policies, BestEffortFIFO, every namespace.
func (t Target) ClusterQueue(q QueuePlan, flavor string) *unstructured.Unstructured {
	cpu := map[string]any{"name": "cpu", "nominalQuota": q.NominalQuota.String()}
	if q.Cohort != "" {
		cpu["borrowingLimit"] = q.BorrowingLimit.String()
	}
	spec := map[string]any{
		"namespaceSelector": map[string]any{},
		"queueingStrategy":  "BestEffortFIFO",
		"resourceGroups": []any{map[string]any{
			"coveredResources": []any{"cpu"},
			"flavors":          []any{map[string]any{"name": flavor, "resources": []any{cpu}}},
		}},
		"preemption": map[string]any{
			"reclaimWithinCohort": orDefault(q.ReclaimWithinCohort, "Never"),
			"withinClusterQueue":  orDefault(q.WithinCQueue, "Never"),
		},
	}
	if q.Cohort != "" {
		spec[t.cohortField] = q.Cohort
	}
	return t.object("ClusterQueue", "", q.Name, spec)
}

// AdmissionCheckName is the check of a mix with one (checker.go), answered
// by the harness.
const (
	AdmissionCheckName       = "bench-delay"
	admissionCheckController = "bench.muster.dev/delay"
)

// AdmissionCheck is the mix's check; withCheck gives a ClusterQueue it,
// in admissionChecksStrategy, which both APIs spell alike.
func (t Target) AdmissionCheck() *unstructured.Unstructured {
	return t.object("AdmissionCheck", "", AdmissionCheckName, map[string]any{"controllerName": admissionCheckController})
}

func withCheck(cq *unstructured.Unstructured) *unstructured.Unstructured {
	_ = unstructured.SetNestedSlice(cq.Object, []any{map[string]any{"name": AdmissionCheckName}}, "spec", "admissionChecksStrategy", "admissionChecks")
	return cq
}

// LocalQueue points at the ClusterQueue of the same name.
func (t Target) LocalQueue(namespace, name, clusterQueue string) *unstructured.Unstructured {
	return t.object("LocalQueue", namespace, name, map[string]any{"clusterQueue": clusterQueue})
}

// Workload is one pod set of podCount pods requesting cpu each, with the
// template's topology constraint if it has one.
func (t Target) Workload(namespace, name, queue string, wt WorkloadTemplate) *unstructured.Unstructured {
	count := wt.PodCount
	if count == 0 {
		count = 1
	}
	container := map[string]any{
		"name": "c", "image": "registry.k8s.io/pause:3.10",
		"resources": map[string]any{"requests": map[string]any{"cpu": wt.Request.String()}},
	}
	podSet := map[string]any{
		"name": "main", "count": int64(count),
		"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never", "containers": []any{container}}},
	}
	if wt.TASConstraint != "" {
		podSet["topologyRequest"] = t.topologyRequest(wt)
	}
	u := t.object("Workload", namespace, name, map[string]any{
		"queueName": queue,
		"priority":  int64(wt.Priority),
		"podSets":   []any{podSet},
	})
	u.SetLabels(map[string]string{ClassLabel: wt.ClassName, RuntimeLabel: fmt.Sprint(wt.RuntimeMs)})
	return u
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// buildOf names the code a binary runs: the commit Go stamped into it
// ("-dirty" when the tree had changes), or, for the harness's build of
// Kueue, Kueue's module version; "" when it has neither (built outside a
// repository, or with -buildvcs=false).
func buildOf(binary string) string {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return ""
	}
	for _, d := range info.Deps {
		if d.Path == "sigs.k8s.io/kueue" {
			return "kueue " + d.Version
		}
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 7:
			rev = s.Value[:7]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}
