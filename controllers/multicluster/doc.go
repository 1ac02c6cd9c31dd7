// Package multicluster answers the AdmissionChecks of controllerName
// muster.dev/multicluster, Kueue's MultiKueue on Muster: a manager
// cluster holds the queues, and a workload that reserved quota there is
// sent to the worker clusters of the check's MultiClusterConfig as copies
// of its Workload; the first worker whose Muster admits its copy runs the
// job (a copy of the manager's, which its spec.managedBy keeps the
// manager's operator away from), the other copies are taken back, and the
// job's status is mirrored onto the manager's until the worker's copy
// finishes, which finishes the manager's workload. A worker that evicts
// the copy, or stops answering for longer than workerLostTimeout, has the
// workload dispatched again (docs/multi-cluster.md).
package multicluster
