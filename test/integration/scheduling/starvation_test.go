package scheduling

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// starvationWorld is a ClusterQueue of size GPUs (no cohort) holding room
// for workloads pending afterSeconds (room that never yields unless a
// mutation says so), with size 1-GPU Jobs running in it.
func starvationWorld(t *testing.T, size int, afterSeconds int32, mutate ...func(*musterv1beta1.ClusterQueue)) (world, []*batchv1.Job) {
	t.Helper()
	w := newWorld(t)
	w.queue(t, "a", strconv.Itoa(size), append([]func(*musterv1beta1.ClusterQueue){func(cq *musterv1beta1.ClusterQueue) {
		cq.Spec.Cohort = ""
		if afterSeconds > 0 {
			cq.Spec.Starvation = &musterv1beta1.StarvationPolicy{AfterSeconds: ptr.To(afterSeconds), YieldAfterSeconds: ptr.To[int32](0)}
		}
	}}, mutate...)...)
	var small []*batchv1.Job
	for i := range size {
		j := w.job(fmt.Sprintf("s%d", i), "a", "1")
		create(t, j)
		small = append(small, j)
	}
	running(t, small...)
	return w, small
}

// TestStarvingJobGetsInWhileSmallJobsArrive: a 16-GPU Job behind a stream
// of 1-GPU Jobs in a 16-GPU queue. Without the guard, each GPU that frees
// goes to the next 1-GPU Job (Kueue's BestEffortFIFO). With
// starvation.afterSeconds, once the big Job has waited that long every
// freed GPU is held for it, the 1-GPU Jobs that keep arriving wait behind
// it saying so — also after a manager restart midway, which holds the same
// room (nothing about it is written) — and it runs when the last of the
// first sixteen finishes.
func TestStarvingJobGetsInWhileSmallJobsArrive(t *testing.T) {
	mgr := env.StartManager(t)
	t.Run("without the guard", func(t *testing.T) {
		w, small := starvationWorld(t, 16, 0)
		big := w.job("big", "a", "16")
		create(t, big)
		env.ExpectJobPending(t, big, "insufficient quota")
		env.CompleteJob(t, small[0])
		next := w.job("s16", "a", "1")
		create(t, next)
		running(t, next)
		env.ExpectJobPending(t, big, "insufficient quota")
	})
	t.Run("with the guard", func(t *testing.T) {
		w, small := starvationWorld(t, 16, 2)
		big := w.job("big", "a", "16")
		create(t, big)
		env.ExpectJobPending(t, big, "room held for it") // it has waited afterSeconds
		var arrivals []*batchv1.Job
		for i := range 15 {
			if i == 8 {
				mgr = env.Restart(t, mgr)
			}
			env.CompleteJob(t, small[i])
			next := w.job(fmt.Sprintf("s%d", 16+i), "a", "1")
			create(t, next)
			arrivals = append(arrivals, next)
			if i < nearHead-1 {
				env.ExpectJobPending(t, next, "waiting behind starving workload")
			} else {
				// Behind big and nearHead-1 others: its reason is kept in
				// memory, not written (docs/scheduling.md).
				expectQueuedUndescribed(t, next)
			}
		}
		env.ExpectJobPending(t, big, "room held for it")
		env.CompleteJob(t, small[15])
		running(t, big)
		for _, j := range arrivals[:nearHead] {
			env.ExpectJobPending(t, j, "")
		}
	})
}

// TestHeldRoomYieldsToALongWait: the room held for a starving 16-GPU Job
// yields to a 1-GPU Job once that one has waited yieldAfterSeconds — it
// runs on a freed GPU, its reason having said when it would — while the
// 16-GPU Job keeps the rest of its room.
func TestHeldRoomYieldsToALongWait(t *testing.T) {
	env.StartManager(t)
	w, small := starvationWorld(t, 16, 1, func(cq *musterv1beta1.ClusterQueue) {
		cq.Spec.Starvation.YieldAfterSeconds = ptr.To[int32](8)
	})
	big := w.job("big", "a", "16")
	create(t, big)
	env.ExpectJobPending(t, big, "room held for it")
	patient := w.job("patient", "a", "1")
	create(t, patient)
	env.CompleteJob(t, small[0])
	env.ExpectJobPending(t, patient, "or one that has waited 8s (starvation.yieldAfterSeconds)")
	env.ExpectJobPending(t, big, "room held for it")
	running(t, patient)
	env.ExpectJobPending(t, big, "room held for it")
}

// TestBackfillUsesHeldRoomOnlyWithBoundedJobs: in a queue whose workloads
// are bounded to 10 minutes by default, the room held for a starving Job
// is complete when the running ones' bounds end; a Job bounded to a minute
// backfills into it, one bounded to two hours does not, and a Job with a
// malformed bound is refused at submission.
func TestBackfillUsesHeldRoomOnlyWithBoundedJobs(t *testing.T) {
	env.StartManager(t)
	w, small := starvationWorld(t, 4, 1, func(cq *musterv1beta1.ClusterQueue) {
		cq.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](600)
	})
	big := w.job("big", "a", "4")
	create(t, big)
	env.ExpectJobPending(t, big, "room held for it")
	env.CompleteJob(t, small[0])
	env.ExpectJobPending(t, big, "enough should be free by")

	long := MakeJob("long", w.ns).Queue("a").Request(gpu, "1").Annotation(jobframework.MaxRuntimeAnnotation, "2h").Obj()
	create(t, long)
	env.ExpectJobPending(t, long, "only a job whose maximum execution time ends by")

	short := MakeJob("short", w.ns).Queue("a").Request(gpu, "1").Annotation(jobframework.MaxRuntimeAnnotation, "1m").Obj()
	create(t, short)
	running(t, short)
	g := NewWithT(t)
	g.Expect(env.WorkloadOfJob(g, short).Spec.MaximumExecutionTimeSeconds).To(HaveValue(BeEquivalentTo(60)))
	env.ExpectJobPending(t, long, "only a job whose maximum execution time ends by")
	env.ExpectJobPending(t, big, "room held for it")

	bad := MakeJob("bad", w.ns).Queue("a").Request(gpu, "1").Annotation(jobframework.MaxRuntimeAnnotation, "soon").Obj()
	err := env.Client.Create(context.Background(), bad)
	g.Expect(err).To(MatchError(ContainSubstring(`must be a duration from 1s to 68 years`)))
}

// TestMaximumExecutionTime: a Job past its maximum execution time (its
// label's, or its ClusterQueue's default) is deactivated: its workload goes
// inactive with the reason, and the Job is suspended and stays so; its
// allowance is reset for when a user reactivates it (as in Kueue).
func TestMaximumExecutionTime(t *testing.T) {
	env.StartManager(t)
	for _, tc := range []struct {
		name       string
		queueLimit *int32
		label      string
	}{
		{"the job's label", nil, "2"},
		{"the queue's default", ptr.To[int32](2), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.queue(t, "a", "4", func(cq *musterv1beta1.ClusterQueue) {
				cq.Spec.Cohort = ""
				cq.Spec.MaximumExecutionTimeSeconds = tc.queueLimit
			})
			b := MakeJob("bounded", w.ns).Queue("a").Request(gpu, "1")
			if tc.label != "" {
				b.Label(jobframework.MaxExecTimeLabel, tc.label)
			}
			j := b.Obj()
			create(t, j)
			running(t, j)
			g := NewWithT(t)
			g.Eventually(func(g Gomega) {
				g.Expect(framework.IsSuspended(env.GetJob(g, j))).To(BeTrue())
				wl := env.WorkloadOfJob(g, j)
				g.Expect(wl.Spec.Active).To(HaveValue(BeFalse()))
				g.Expect(wl.Status.Admission).To(BeNil())
				g.Expect(wl.Status.AccumulatedPastExecutionTimeSeconds).To(BeNil(), "reactivating gives a new allowance")
				g.Expect(env.EventReasons(g, w.ns, j.Name)).To(ContainElement(musterv1beta1.ReasonMaximumExecutionTimeExceeded))
			}, framework.Timeout, framework.Interval).Should(Succeed())
			framework.HoldsFor(t, func(g Gomega) {
				g.Expect(framework.IsSuspended(env.GetJob(g, j))).To(BeTrue(), "a deactivated job is not admitted again")
			})
		})
	}
}

// TestMaximumExecutionTimeSetOnTheQueueLater: a running Job with no bound
// of its own is deactivated once its ClusterQueue gets a default it is
// already past — not only at the next reconcile that happens to come.
func TestMaximumExecutionTimeSetOnTheQueueLater(t *testing.T) {
	env.StartManager(t)
	w := newWorld(t)
	cq := w.queue(t, "a", "4", func(cq *musterv1beta1.ClusterQueue) { cq.Spec.Cohort = "" })
	j := w.job("unbounded", "a", "1")
	create(t, j)
	running(t, j)
	time.Sleep(2 * time.Second) // past the bound set below
	g := NewWithT(t)
	g.Eventually(func() error {
		obj := clusterQueue(g, cq)
		obj.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](1)
		return env.Client.Update(context.Background(), obj)
	}, framework.Timeout, framework.Interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(framework.IsSuspended(env.GetJob(g, j))).To(BeTrue())
		g.Expect(env.WorkloadOfJob(g, j).Spec.Active).To(HaveValue(BeFalse()))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// TestMinRuntimeOfAWorkloadPriorityClass: a victim whose
// WorkloadPriorityClass sets preemption.minRuntimeSeconds is not preempted
// before it has run that long, in a queue that sets none.
func TestMinRuntimeOfAWorkloadPriorityClass(t *testing.T) {
	env.StartManager(t)
	w := newWorld(t)
	high := MakeWorkloadPriorityClass("high-"+w.ns, 100)
	protected := MakeWorkloadPriorityClass("protected-"+w.ns, 0)
	protected.Preemption = &musterv1beta1.WorkloadPriorityClassPreemption{MinRuntimeSeconds: ptr.To[int32](5)}
	env.CreateAll(t, high, protected)
	w.queue(t, "a", "4", func(cq *musterv1beta1.ClusterQueue) {
		cq.Spec.Cohort = ""
		cq.Spec.Preemption = &musterv1beta1.ClusterQueuePreemption{WithinClusterQueue: musterv1beta1.PreemptionPolicyLowerPriority}
	})
	low := w.job("low", "a", "4", protected.Name)
	create(t, low)
	running(t, low)
	urgent := w.job("urgent", "a", "4", high.Name)
	create(t, urgent)
	env.ExpectJobPending(t, urgent, "have not run their minimum runtime")
	g := NewWithT(t)
	g.Expect(framework.IsSuspended(env.GetJob(g, low))).To(BeFalse(), "not preempted within its class's minimum runtime")
	expectPreempted(t, low, "InClusterQueue")
	running(t, urgent)
}
