// Package admissionchecks runs the second phase of admission: a workload
// that reserved quota in a ClusterQueue with admission checks is admitted
// once every check says Ready, evicted and queued again after a backoff
// when one asks for a retry, and deactivated when one rejects it
// (Lifecycle). Subpackages answer checks: provisioning asks the cluster
// autoscaler for a workload's nodes with a ProvisioningRequest.
//
// A check's controller writes only its own entry of
// Workload.status.admissionChecks (internal/workload.SetCheckState); the
// transitions that follow are this package's, so every check, Muster's or
// a third party's, is followed the same way.
package admissionchecks
