package scheduling

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/topology"
)

func TestPlacementIsWrittenCompactlyAndReadBack(t *testing.T) {
	g := NewWithT(t)
	pl := &core.Placement{Topology: "fabric", Assignment: &topology.Assignment{
		Levels: []string{"block", "rack", topology.HostnameLabel},
		Domains: []topology.DomainCount{
			{Values: []string{"b1", "r1", "n1"}, Count: 2}, {Values: []string{"b1", "r1", "n2"}, Count: 2},
			{Values: []string{"b1", "r2", "n3"}, Count: 1}, {Values: []string{"b1", "r2", "n4"}, Count: 3},
		},
		Nodes: []topology.NodeCount{{Name: "n1", Count: 2}, {Name: "n2", Count: 2}, {Name: "n3", Count: 1}, {Name: "n4", Count: 3}},
	}}
	ta := fromPlacement(pl)
	g.Expect(ta.Levels).To(Equal([]string{"block", "rack", topology.HostnameLabel}))
	g.Expect(ta.Domains).To(Equal([]musterv1beta1.TopologyDomainAssignment{
		{Values: []string{"b1", "r1"}, Leaves: []string{"n1", "n2"}, Count: ptr.To[int32](2)},
		{Values: []string{"b1", "r2"}, Leaves: []string{"n3", "n4"}, Counts: []int32{1, 3}},
	}))
	back := toPlacement(ta, "fabric", core.Requests{"nvidia.com/gpu": 4, "pods": 1})
	g.Expect(back.Topology).To(Equal("fabric"))
	g.Expect(back.Nodes).To(Equal(pl.Nodes))
	g.Expect(back.Request).To(Equal(topology.Resources{"nvidia.com/gpu": 4}))
}

func TestPlacementNamesNodesWhenTheLastLevelIsNotTheHost(t *testing.T) {
	pl := &core.Placement{Assignment: &topology.Assignment{
		Levels:  []string{"block", "rack"},
		Domains: []topology.DomainCount{{Values: []string{"b1", "r1"}, Count: 3}},
		Nodes:   []topology.NodeCount{{Name: "n1", Count: 1}, {Name: "n2", Count: 2}},
	}}
	ta := fromPlacement(pl)
	NewWithT(t).Expect(ta).To(Equal(&musterv1beta1.TopologyAssignment{
		Levels:  []string{"block", "rack", topology.HostnameLabel},
		Domains: []musterv1beta1.TopologyDomainAssignment{{Values: []string{"b1", "r1"}, Leaves: []string{"n1", "n2"}, Counts: []int32{1, 2}}},
	}))
}

func TestTopologyRequestConversion(t *testing.T) {
	g := NewWithT(t)
	g.Expect(toTopologyRequest(nil)).To(BeNil())
	g.Expect(toTopologyRequest(&musterv1beta1.PodSetTopologyRequest{Required: ptr.To("rack"), PodSetGroupName: ptr.To("g")})).
		To(Equal(&core.TopologyRequest{Mode: topology.Required, Level: "rack", Group: "g"}))
	g.Expect(toTopologyRequest(&musterv1beta1.PodSetTopologyRequest{Preferred: ptr.To("block"), PodSetSliceRequiredTopology: ptr.To("rack"), PodSetSliceSize: ptr.To[int32](4)})).
		To(Equal(&core.TopologyRequest{Mode: topology.Preferred, Level: "block", SliceLevel: "rack", SliceSize: 4}))
	g.Expect(toTopologyRequest(&musterv1beta1.PodSetTopologyRequest{Unconstrained: ptr.To(true)})).
		To(Equal(&core.TopologyRequest{Mode: topology.Unconstrained}))
}
