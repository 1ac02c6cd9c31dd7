// Package gang tests the hand-off of admitted jobs to gang schedulers on a
// real API server that serves Kubernetes' Workload API (GenericWorkload)
// and the Volcano and coscheduling PodGroup CRDs: the exact objects and
// pod template fields Muster writes for each provider, the pod fields its
// pod webhook sets, their removal on finish and eviction, and a queue whose
// gang scheduler is missing. There is no kube-scheduler here (test/e2e
// binds real pods); pods are created as the Job controller would.
package gang

import (
	"testing"

	"github.com/onsi/gomega"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	// The suite's Eventually calls wait as long as the others' (the API
	// server is shared with other suites in CI: 1 s is not enough).
	gomega.SetDefaultEventuallyTimeout(framework.Timeout)
	gomega.SetDefaultEventuallyPollingInterval(framework.Interval)
	framework.Main(m, framework.Options{
		Webhooks:      true,
		JobCRDs:       []string{"pytorchjob", "raycluster", "volcano", "coscheduling"},
		APIServerArgs: framework.WorkloadAPIArgs,
	}, &env, true)
}
