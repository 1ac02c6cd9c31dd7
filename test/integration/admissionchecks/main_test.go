// Package admissionchecks tests two-phase admission against a real API
// server: a Job reserves quota, waits for its ClusterQueue's admission
// checks (a third party's, written by the test as its controller would,
// and Muster's ProvisioningRequest check, with the test as the cluster
// autoscaler), and runs only once they are Ready.
package admissionchecks

import (
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	framework.Main(m, framework.Options{Webhooks: true, JobCRDs: []string{"provisioningrequest"}}, &env, false)
}
