//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

// TestAppWrapperRunsWholeWithItsController: with the real AppWrapper
// controller, two AppWrappers each wrapping a Job of 8 one-GPU pods, in a
// Kueue user's queue of 8 GPUs: the first is admitted whole, the
// controller creates its Job with Muster's placement (its pods run on the
// h100 flavor) and the Job is its part; the second waits whole and runs
// once the controller marks the first Succeeded.
func TestAppWrapperRunsWholeWithItsController(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t)
	queues(t, ns, "0", "8")
	wrapped := func(name string) *awv1beta2.AppWrapper {
		return MakeAppWrapper(name, ns).Queue("main").Component(gpuJob(ns, name+"-job", "", 8, "15s")).Obj()
	}
	first, second := wrapped("first"), wrapped("second")
	createAll(t, first)
	pods := func(name string) map[string]string { return map[string]string{batchv1.JobNameLabel: name + "-job"} }
	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, pods(first.Name))
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"h100": 8}), "the first AppWrapper's 8 pods run on the h100 flavor")
	createAll(t, second)
	var got awv1beta2.AppWrapper
	g.Consistently(func(g Gomega) bool {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(second), &got)).To(Succeed())
		return got.Spec.Suspend
	}, 3*time.Second, time.Second).Should(BeTrue(), "the second waits: its 8 GPUs are the first's")
	var wls musterv1beta1.WorkloadList
	g.Expect(c.List(ctx, &wls, client.InNamespace(ns))).To(Succeed())
	g.Expect(wls.Items).To(HaveLen(2), "one Workload per AppWrapper, none for their Jobs")

	done := func(aw *awv1beta2.AppWrapper) func(g Gomega) awv1beta2.AppWrapperPhase {
		return func(g Gomega) awv1beta2.AppWrapperPhase {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(aw), &got)).To(Succeed())
			return got.Status.Phase
		}
	}
	g.Eventually(done(first), timeout, time.Second).Should(Equal(awv1beta2.AppWrapperSucceeded), "the controller completes the first")
	g.Eventually(func(g Gomega) map[string]int {
		_, kinds := countPods(g, ns, pods(second.Name))
		return kinds
	}, timeout, time.Second).Should(Equal(map[string]int{"h100": 8}), "the second runs on the quota the first released")
	g.Eventually(done(second), timeout, time.Second).Should(Equal(awv1beta2.AppWrapperSucceeded))
}
