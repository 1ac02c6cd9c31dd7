package scheduling

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1beta1 "github.com/musterhq/muster/apis/config/v1beta1"
	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// decayedGPUs is the decayed GPU usage a ClusterQueue's status shows, in
// thousandths of a GPU, and when it was sampled.
func decayedGPUs(g Gomega, cq string) (int64, time.Time) {
	return decayedGPUsIn(g, clusterQueue(g, cq).Status.FairSharing)
}

// localQueueDecayedGPUs is decayedGPUs of a LocalQueue.
func localQueueDecayedGPUs(g Gomega, ns, name string) (int64, time.Time) {
	var lq musterv1beta1.LocalQueue
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &lq)).To(Succeed())
	return decayedGPUsIn(g, lq.Status.FairSharing)
}

func decayedGPUsIn(g Gomega, fs *musterv1beta1.FairSharingStatus) (int64, time.Time) {
	g.Expect(fs).NotTo(BeNil())
	g.Expect(fs.LastSampled).NotTo(BeNil(), "sampled")
	for _, f := range fs.DecayedUsage {
		for _, r := range f.Resources {
			if r.Name == gpu {
				return r.Total.MilliValue(), fs.LastSampled.Time
			}
		}
	}
	return 0, fs.LastSampled.Time
}

// TestDecayedUsageSurvivesARestart: with fairSharing.usage on, a queue
// (and its LocalQueue) that runs 4 GPUs shows its decayed usage growing in status; its jobs
// finish, and a restarted manager continues from what the status kept —
// still decaying from there, not started over at 0 (the queue would look
// as if it had never run) nor jumping.
func TestDecayedUsageSurvivesARestart(t *testing.T) {
	decay := func(c *configv1beta1.Configuration) {
		c.FairSharing.Enable = true
		c.FairSharing.Usage = &configv1beta1.FairSharingUsage{
			HalfLife: metav1.Duration{Duration: time.Minute}, SamplingInterval: &metav1.Duration{Duration: 500 * time.Millisecond}}
	}
	mgr := env.StartManager(t, decay)
	w := newWorld(t)
	pool := MakeCohort(w.cohort, "")
	pool.Spec.ResourceGroups = []musterv1beta1.ResourceGroup{MakeResourceGroup(MakeFlavorQuotas(w.flavor).Resource(gpu, "8").Obj())}
	env.CreateAll(t, pool)
	a := w.queue(t, "a", "0")
	var jobs []*batchv1.Job
	for i := range 4 {
		jobs = append(jobs, w.job(fmt.Sprintf("a-%d", i), "a", "1"))
	}
	create(t, objects(jobs)...)
	g := NewWithT(t)
	g.Eventually(func(g Gomega) int { return runningCount(g, jobs) }, framework.Timeout, framework.Interval).Should(Equal(4))
	g.Eventually(func(g Gomega) int64 { v, _ := decayedGPUs(g, a); return v }, framework.Timeout, framework.Interval).
		Should(BeNumerically(">=", 100), "4 GPUs held for seconds weigh at least a tenth of a GPU with a minute's half-life")
	for _, j := range jobs {
		env.CompleteJob(t, j)
	}
	g.Eventually(func(g Gomega) int32 { return clusterQueue(g, a).Status.AdmittedWorkloads }, framework.Timeout, framework.Interval).
		Should(BeZero(), "the finished jobs released their quota")
	var kept, lqKept int64
	var keptAt, lqKeptAt time.Time
	g.Eventually(func(g Gomega) {
		kept, keptAt = decayedGPUs(g, a)
		lqKept, lqKeptAt = localQueueDecayedGPUs(g, w.ns, "a")
		g.Expect(lqKept).To(BeNumerically(">=", 100))
	}, framework.Timeout, framework.Interval).Should(Succeed())

	mgr = env.Restart(t, mgr)
	g.Eventually(func(g Gomega) {
		v, at := decayedGPUs(g, a)
		g.Expect(at).To(BeTemporally(">", keptAt), "sampled by the new manager")
		// What was kept, decayed by the time since: never more, and (seconds
		// after, with a minute's half-life) nowhere near 0.
		g.Expect(v).To(BeNumerically("<=", kept))
		g.Expect(v).To(BeNumerically(">=", kept/2))
		lv, lat := localQueueDecayedGPUs(g, w.ns, "a")
		g.Expect(lat).To(BeTemporally(">", lqKeptAt), "the LocalQueue sampled by the new manager")
		g.Expect(lv).To(BeNumerically("<=", lqKept))
		g.Expect(lv).To(BeNumerically(">=", lqKept/2))
	}, framework.Timeout, framework.Interval).Should(Succeed())
	_ = mgr
}
