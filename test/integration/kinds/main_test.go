// Package kinds tests the PyTorchJob, RayCluster, RayJob, JobSet, MPIJob, Pod, LeaderWorkerSet, TrainJob and AppWrapper integrations against a
// real API server with their CRDs (from the module cache) and Muster's
// webhooks installed.
package kinds

import (
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	framework.Main(m, framework.Options{Webhooks: true, JobCRDs: []string{"pytorchjob", "raycluster", "rayjob", "jobset", "mpijob", "leaderworkerset", "trainjob", "appwrapper"}}, &env, false)
}
