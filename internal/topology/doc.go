// Package topology is the pure placement core of topology-aware admission
// (issue 14, Kueue's TAS semantics): given where free capacity sits in a
// cluster's topology, it decides whether a pod set fits in one block, rack
// or host, and which domains and nodes its pods would land on.
//
// # Model
//
// A Tree has 1–8 levels, coarsest first, each a node label key (for
// example block, rack, hostname; a hostname level may only come last).
// A domain at level l is named by the label values of levels 0..l; the
// nodes are the leaves below the last level. A node carries allocatable
// amounts per resource (int64 in the resource's unit, cpu in milli-cores)
// and a pod cap; usage (bound pods, placements of admitted workloads) is
// added and removed by events, so the tree is kept up to date incrementally
// and never rebuilt per scheduling cycle. Nodes lacking a level label are
// outside the topology and never offered.
//
// # What the scheduler calls
//
// Controllers feed the Tree events: SetNode, RemoveNode, AddUsage,
// RemoveUsage (and AddAssignment/RemoveAssignment for admitted
// workloads). The tree keeps its nodes sorted by label values and their
// free capacity in flat rows in that order, so each event costs a few
// vector operations and a scheduling cycle's Snapshot is two flat copies;
// the immutable layout of domains, shared by snapshots, is derived again
// (one linear pass) only after a node joined, left or was relabelled.
//
// The cycle calls Place or PlaceGroup for a workload's pod sets and Apply
// (ApplyAll for a group) on the snapshot for the ones it admits, so two
// placements in one cycle never promise the same capacity twice; Unapply
// takes a tentative one back and Clone copies a snapshot for a batch of
// tries. Once admitted, AddAssignment records the assignment on the tree;
// the wiring must count each pod once, through its workload's assignment
// or, for pods of no admitted workload, as bound usage. The caller evaluates taints,
// tolerations, node selectors and affinity and passes the verdict as
// PodSet.Fits; this package never sees API objects.
//
// # Placement
//
// Per node, the pods of a set that fit are min over requested resources of
// free/request, capped by the free pod slots. A domain's capacity is the sum
// over its nodes, or with slices the number of whole slices its slice-level
// domains hold. Required and preferred modes pick the tightest domain at the
// level that still holds the whole set, leaving big holes for big jobs;
// preferred climbs to coarser levels and finally spreads over the fewest
// domains. Inside a chosen domain the pods go to the fewest children,
// largest first, the last one best fit. Unconstrained climbs the same way
// from the lowest level, and fills the domains and nodes with the least
// capacity first. A set that does not fit comes back as
// a *NoFit that names the shape and the best domain, for a pending reason.
package topology
