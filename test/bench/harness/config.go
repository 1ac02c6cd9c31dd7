// Package harness runs Muster and Kueue side by side on Kueue's scheduler
// performance mix: one envtest API server per run, the system under test as
// a child process, a generator that creates Workloads directly, a fake
// kubelet that finishes them after their runtime, and a recorder.
package harness

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// Config is Kueue's generator schema (kubernetes-sigs/kueue
// test/performance/scheduler/runner/generator), read unchanged so Kueue's
// own files load as they are, topology-aware ones (configs/tas) included.
type Config struct {
	Topology       *TopologyConfig       `json:"topology,omitempty"`
	ResourceFlavor *ResourceFlavorConfig `json:"resourceFlavor,omitempty"`
	Cohorts        []CohortSet           `json:"cohorts,omitempty"`
	// AdmissionCheck, Muster's and not Kueue's generator's, gives every
	// ClusterQueue one admission check that the harness answers Ready
	// after a random delay (checker.go), on both systems.
	AdmissionCheck *AdmissionCheckConfig `json:"admissionCheck,omitempty"`
}

// AdmissionCheckConfig is how long the harness's check takes to answer:
// uniformly between MinDelayMs and MaxDelayMs after it sees the
// reservation.
type AdmissionCheckConfig struct {
	MinDelayMs int `json:"minDelayMs"`
	MaxDelayMs int `json:"maxDelayMs"`
}

// ResourceFlavorConfig names the single flavor every ClusterQueue uses.
// With a topology, NodeLabel is the key of the label (value "tas") that the
// generated nodes carry and the flavor selects, as in Kueue's generator.
type ResourceFlavorConfig struct {
	Name         string `json:"name"`
	NodeLabel    string `json:"nodeLabel,omitempty"`
	TopologyName string `json:"topologyName,omitempty"`
	// NodeFit, Muster's and not Kueue's, is the node fit of Muster's flavor
	// in a mix with nodes but no topologyName (Check or Pin): Muster checks
	// the nodes, Kueue's flavor admits on quota alone.
	NodeFit string `json:"nodeFit,omitempty"`
}

// CohortSet is Count cohorts, each holding every QueuesSet.
type CohortSet struct {
	ClassName  string      `json:"className"`
	Count      int         `json:"count"`
	QueuesSets []QueuesSet `json:"queuesSets"`
}

// QueuesSet is Count ClusterQueues (each with a LocalQueue in its own
// namespace) and the workloads submitted to each of them.
type QueuesSet struct {
	ClassName           string            `json:"className"`
	Count               int               `json:"count"`
	NominalQuota        resource.Quantity `json:"nominalQuota"`
	BorrowingLimit      resource.Quantity `json:"borrowingLimit"`
	ReclaimWithinCohort string            `json:"reclaimWithinCohort"`
	WithinClusterQueue  string            `json:"withinClusterQueue"`
	WorkloadsSets       []WorkloadsSet    `json:"workloadsSets"`
}

// WorkloadsSet is one creation loop per ClusterQueue: Count rounds, one
// every CreationIntervalMs, each creating one workload of every template.
type WorkloadsSet struct {
	Count              int                `json:"count"`
	CreationIntervalMs uint               `json:"creationIntervalMs"`
	Workloads          []WorkloadTemplate `json:"workloads"`
}

// WorkloadTemplate is one class of workload.
type WorkloadTemplate struct {
	ClassName string            `json:"className"`
	RuntimeMs uint              `json:"runtimeMs"`
	Priority  int32             `json:"priority"`
	Request   resource.Quantity `json:"request"`
	// PodCount is the number of pods (default 1); Request is per pod.
	PodCount int `json:"podCount,omitempty"`
	// TASConstraint is how the pods must sit in the topology: required,
	// preferred or balanced, at the level whose node label is TASLevel.
	// How each target spells it is Target.topologyRequest.
	TASConstraint string `json:"tasConstraint,omitempty"`
	TASLevel      string `json:"tasLevel,omitempty"`
	// SliceSize is the pods per slice of a balanced workload.
	SliceSize int32 `json:"sliceSize,omitempty"`
}

// LoadConfig reads and validates a generator file.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(data)
}

// ParseConfig parses and validates a generator document; unknown fields are
// errors, so a typo does not silently run a different mix.
func ParseConfig(data []byte) (*Config, error) {
	cfg := &Config{}
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return nil, fmt.Errorf("parsing generator config: %w", err)
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("invalid generator config: %w", err)
	}
	return cfg, nil
}

// FlavorName is the flavor the ClusterQueues use.
func (c *Config) FlavorName() string {
	if c.ResourceFlavor != nil && c.ResourceFlavor.Name != "" {
		return c.ResourceFlavor.Name
	}
	return "default"
}

func (c *Config) validate() error {
	if err := c.validateTopology(); err != nil {
		return err
	}
	if len(c.Cohorts) == 0 {
		return errors.New("no cohorts")
	}
	if ac := c.AdmissionCheck; ac != nil && (ac.MinDelayMs < 0 || ac.MaxDelayMs < ac.MinDelayMs) {
		return errors.New("admissionCheck: want 0 <= minDelayMs <= maxDelayMs")
	}
	for i, cs := range c.Cohorts {
		if cs.Count < 1 || cs.ClassName == "" {
			return fmt.Errorf("cohorts[%d]: className and a count >= 1 are required", i)
		}
		for j, qs := range cs.QueuesSets {
			if err := qs.validate(c.Topology); err != nil {
				return fmt.Errorf("cohorts[%d].queuesSets[%d]: %w", i, j, err)
			}
		}
	}
	return nil
}

func (qs *QueuesSet) validate(topo *TopologyConfig) error {
	if qs.Count < 1 || qs.ClassName == "" {
		return errors.New("className and a count >= 1 are required")
	}
	if qs.NominalQuota.Sign() < 0 || qs.BorrowingLimit.Sign() < 0 {
		return errors.New("nominalQuota and borrowingLimit must not be negative")
	}
	policies := map[string]bool{"": true, "Never": true, "LowerPriority": true, "Any": true, "LowerOrNewerEqualPriority": true}
	if !policies[qs.ReclaimWithinCohort] || !policies[qs.WithinClusterQueue] {
		return fmt.Errorf("unknown preemption policy %q/%q", qs.ReclaimWithinCohort, qs.WithinClusterQueue)
	}
	for k, ws := range qs.WorkloadsSets {
		if ws.Count < 0 || len(ws.Workloads) == 0 {
			return fmt.Errorf("workloadsSets[%d]: a count >= 0 and at least one workload are required", k)
		}
		for l, wt := range ws.Workloads {
			if wt.ClassName == "" || wt.Request.Sign() <= 0 || wt.PodCount < 0 {
				return fmt.Errorf("workloadsSets[%d].workloads[%d]: className, a positive request and podCount >= 0 are required", k, l)
			}
			if err := wt.validateTopology(topo); err != nil {
				return fmt.Errorf("workloadsSets[%d].workloads[%d]: %w", k, l, err)
			}
		}
	}
	return nil
}

// Plan is the generator's output: the queues to create and, per
// ClusterQueue, the workload creation loops.
type Plan struct {
	Flavor string
	// Topology is the nodes and levels of a mix with nodes, else nil.
	Topology *TopologyPlan
	// TopologyAware: the flavor names the topology (else the nodes are
	// only checked by Muster's node fit, NodeFit).
	TopologyAware bool
	NodeFit       string
	// AdmissionCheck, when set, is the check every ClusterQueue has.
	AdmissionCheck *AdmissionCheckConfig
	Queues         []QueuePlan
	// Classes are the workload classes in the order they first appear.
	Classes []string
}

// QueuePlan is one ClusterQueue, its LocalQueue (same name) in its own
// namespace (same name), and its creation loops.
type QueuePlan struct {
	Name, Cohort                      string
	NominalQuota, BorrowingLimit      resource.Quantity
	ReclaimWithinCohort, WithinCQueue string
	Sets                              []WorkloadsSet
}

// Plan expands the cohort and queue sets, naming objects as Kueue's
// generator does: <queue class>-<set>-<index>-<cohort>.
func (c *Config) Plan() Plan {
	p := Plan{Flavor: c.FlavorName(), Topology: c.topologyPlan(), AdmissionCheck: c.AdmissionCheck}
	if rf := c.ResourceFlavor; rf != nil {
		p.TopologyAware, p.NodeFit = rf.TopologyName != "", rf.NodeFit
	}
	seen := map[string]bool{}
	for ci, cs := range c.Cohorts {
		for n := 0; n < cs.Count; n++ {
			cohort := fmt.Sprintf("%s-%d-%d", cs.ClassName, ci, n)
			for si, qs := range cs.QueuesSets {
				for q := 0; q < qs.Count; q++ {
					p.Queues = append(p.Queues, QueuePlan{
						Name:   fmt.Sprintf("%s-%d-%d-%s", qs.ClassName, si, q, cohort),
						Cohort: cohort, NominalQuota: qs.NominalQuota, BorrowingLimit: qs.BorrowingLimit,
						ReclaimWithinCohort: qs.ReclaimWithinCohort, WithinCQueue: qs.WithinClusterQueue,
						Sets: qs.WorkloadsSets,
					})
				}
				for _, ws := range qs.WorkloadsSets {
					for _, wt := range ws.Workloads {
						if !seen[wt.ClassName] {
							seen[wt.ClassName] = true
							p.Classes = append(p.Classes, wt.ClassName)
						}
					}
				}
			}
		}
	}
	return p
}

// Workloads is the number of workloads the plan creates.
func (p Plan) Workloads() int {
	n := 0
	for _, q := range p.Queues {
		for _, s := range q.Sets {
			n += s.Count * len(s.Workloads)
		}
	}
	return n
}

// Capacity is the sum of the ClusterQueues' nominal quotas, in millicores.
func (p Plan) Capacity() int64 {
	var n int64
	for _, q := range p.Queues {
		n += q.NominalQuota.MilliValue()
	}
	return n
}
