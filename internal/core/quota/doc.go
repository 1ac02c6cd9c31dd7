// Package quota is what the cluster holds and has free: ClusterQueues and
// cohorts as a tree (quotatree.go) with their nominal, borrowing and
// lending limits, the cache of admitted workloads, flavors, nodes, pods and
// topologies that controllers keep current, usage decay and the LocalQueues'
// usage for fair sharing, and the Snapshot one scheduling cycle decides on.
// It knows nothing of who waits (package queue) or of how a cycle decides
// (package scheduler); policy is the scheduler's, not the cache's.
package quota
