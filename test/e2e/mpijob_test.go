//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	kfmpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

// TestMPIJobRunsWholeWithTheMPIOperator: with the real MPI operator, an
// MPIJob of a launcher and four 2-GPU workers is admitted whole onto the
// h100 flavor; its launcher Job is its part (no Workload of its own); a
// second MPIJob waits for the whole of its quota and runs once the first's
// launcher has finished and the operator marks it Succeeded.
func TestMPIJobRunsWholeWithTheMPIOperator(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	queues(t, ns, "0", "8")
	mpiJob := func(name string) *kfmpi.MPIJob {
		j := MakeMPIJob(name, ns, 4, gpu, "2").Queue("main").Obj()
		j.Spec.MPIReplicaSpecs[kfmpi.MPIReplicaTypeLauncher].Template.Annotations = map[string]string{"muster.dev/runtime": "15s"}
		return j
	}
	workers := func(name string) map[string]string {
		return map[string]string{kfmpi.JobNameLabel: name, kfmpi.JobRoleLabel: "worker"}
	}
	first, second := mpiJob("first"), mpiJob("second")
	createAll(t, first)
	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, workers(first.Name))
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"h100": 4}), "the first MPIJob's 4 workers run on the h100 flavor")
	g.Eventually(func(g Gomega) {
		var launcher batchv1.Job
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: first.Name + "-launcher"}, &launcher)).To(Succeed())
		g.Expect(launcher.Spec.Suspend).NotTo(HaveValue(BeTrue()), "the operator's launcher Job is not gated again")
	}, timeout, time.Second).Should(Succeed())

	createAll(t, second)
	var got kfmpi.MPIJob
	g.Consistently(func(g Gomega) bool {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(second), &got)).To(Succeed())
		return ptr.Deref(got.Spec.RunPolicy.Suspend, false)
	}, 3*time.Second, time.Second).Should(BeTrue(), "the second waits: its 8 GPUs are the first's")
	var wls musterv1beta1.WorkloadList
	g.Expect(c.List(ctx, &wls, client.InNamespace(ns))).To(Succeed())
	g.Expect(wls.Items).To(HaveLen(2), "one Workload per MPIJob, none for their launcher Jobs")

	succeeded := func(j *kfmpi.MPIJob) func(g Gomega) bool {
		return func(g Gomega) bool {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(j), &got)).To(Succeed())
			for _, cond := range got.Status.Conditions {
				if cond.Type == kfmpi.JobSucceeded && cond.Status == corev1.ConditionTrue {
					return true
				}
			}
			return false
		}
	}
	g.Eventually(succeeded(first), timeout, time.Second).Should(BeTrue(), "the MPI operator marks the first Succeeded")
	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, workers(second.Name))
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"h100": 4}), "the second runs on the quota the first released")
	g.Eventually(succeeded(second), timeout, time.Second).Should(BeTrue())
}
