package gang

import (
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	jobpkg "github.com/musterhq/muster/controllers/jobs/job"
)

// A Job running in waves (4 at once, 6 completions) has 2 pods left once 4
// have succeeded: its pod group's minimum comes down to 2, or the last two
// wait forever for a gang of 4. Fields the API server set and keeps
// immutable (the priority) stay as they are; an unchanged count writes
// nothing.
func TestShrinkLowersTheGangToThePodsLeft(t *testing.T) {
	g := NewWithT(t)
	s := schemeWith(t, schedulingAddToScheme, batchAddToScheme)
	cq := gangQueue(musterv1beta1.GangKubeScheduler)
	wl := admittedWorkload("job-waves-1", "w", 4)
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: GroupName(wl, ""), Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "muster.dev/v1beta1", Kind: "Workload", Name: wl.Name, UID: types.UID("w")}}},
		Spec: schedulingv1beta1.PodGroupSpec{Priority: ptr.To[int32](7),
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 4}}}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(cq, pg).Build()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "waves", Namespace: "ns"},
		Spec:   batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](6)},
		Status: batchv1.JobStatus{Succeeded: 4}}
	adapted := jobpkg.Kind.Adapt(job)
	toRun := adapted.(interface{ PodsToRun() []int32 }).PodsToRun()
	g.Expect(toRun).To(Equal([]int32{2}))

	h := New(c, Config{})
	g.Expect(h.Shrink(t.Context(), adapted, "batch/job", wl, toRun)).To(Succeed())
	var got schedulingv1beta1.PodGroup
	g.Expect(c.Get(t.Context(), client.ObjectKeyFromObject(pg), &got)).To(Succeed())
	g.Expect(got.Spec.SchedulingPolicy.Gang.MinCount).To(Equal(int32(2)))
	g.Expect(got.Spec.Priority).To(Equal(ptr.To[int32](7)), "defaulted fields kept")
	rv := got.ResourceVersion
	g.Expect(h.Shrink(t.Context(), adapted, "batch/job", wl, toRun)).To(Succeed())
	g.Expect(c.Get(t.Context(), client.ObjectKeyFromObject(pg), &got)).To(Succeed())
	g.Expect(got.ResourceVersion).To(Equal(rv), "nothing to change, nothing written")
}
