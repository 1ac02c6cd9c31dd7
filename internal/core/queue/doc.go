// Package queue holds the pending workloads: per ClusterQueue, in priority
// then age order (Before), with LocalQueues feeding them, parked until
// something changes or until a time, and counted for status. It hands the
// scheduler each queue's heads and the order a queue's cycles try them in,
// including the LocalQueues' turns of admission fair sharing (Turns), whose
// scores come in as functions: the queues never read quota.
package queue
