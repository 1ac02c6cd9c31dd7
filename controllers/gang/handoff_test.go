package gang

import (
	"context"
	"errors"
	"testing"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	jobpkg "github.com/musterhq/muster/controllers/jobs/job"
	"github.com/musterhq/muster/controllers/jobs/pytorchjob"
)

// An operator that makes its own pod group (training-operator with
// --gang-scheduler-name) gets the admitted count in the job's
// minAvailable, and Muster creates and marks nothing.
func TestOperatorMadeGroupsGetTheAdmittedCount(t *testing.T) {
	cases := map[string]struct {
		provider      musterv1beta1.GangSchedulerProvider
		operatorKinds []string
		wantMin       *int32
		wantGroups    int
		wantMarks     bool
	}{
		"Volcano, the operator makes it": {provider: musterv1beta1.GangVolcano, operatorKinds: []string{"kubeflow.org/pytorchjob"}, wantMin: ptr.To[int32](5)},
		"Volcano, Muster makes it":       {provider: musterv1beta1.GangVolcano, wantGroups: 1, wantMarks: true},
		"KAI reads minAvailable":         {provider: musterv1beta1.GangKAI, wantMin: ptr.To[int32](5), wantMarks: true},
		"KubeScheduler ignores operators": {provider: musterv1beta1.GangKubeScheduler, operatorKinds: []string{"kubeflow.org/pytorchjob"},
			wantGroups: 1, wantMarks: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			s := runtime.NewScheme()
			g.Expect(musterv1beta1.AddToScheme(s)).To(Succeed())
			g.Expect(kftraining.AddToScheme(s)).To(Succeed())
			g.Expect(AddToScheme(s)).To(Succeed())
			g.Expect(schedulingAddToScheme(s)).To(Succeed())
			cq := &musterv1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"},
				Spec: musterv1beta1.ClusterQueueSpec{GangScheduling: &musterv1beta1.GangScheduling{Provider: tc.provider}}}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(cq).Build()
			h := New(c, Config{Queue: "default", SchedulerNames: map[string]string{"Volcano": "volcano", "KAI": "kai-scheduler"}, OperatorPodGroups: tc.operatorKinds})

			pj := &kftraining.PyTorchJob{ObjectMeta: metav1.ObjectMeta{Name: "ddp", Namespace: "ns"},
				Spec: kftraining.PyTorchJobSpec{PyTorchReplicaSpecs: map[kftraining.ReplicaType]*kftraining.ReplicaSpec{
					kftraining.PyTorchJobReplicaTypeMaster: {Replicas: ptr.To[int32](1)},
					kftraining.PyTorchJobReplicaTypeWorker: {Replicas: ptr.To[int32](4)}}}}
			wl := &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: "pytorchjob-ddp-1", Namespace: "ns", UID: "w"},
				Status: musterv1beta1.WorkloadStatus{Admission: &musterv1beta1.Admission{ClusterQueue: "cq",
					PodSetAssignments: []musterv1beta1.PodSetAssignment{{Name: "master", Count: ptr.To[int32](1)}, {Name: "worker", Count: ptr.To[int32](4)}}}}}
			infos := []jobframework.PodSetInfo{{Name: "master", Count: 1}, {Name: "worker", Count: 4}}
			g.Expect(h.Start(t.Context(), pytorchjob.Kind.Adapt(pj), "kubeflow.org/pytorchjob", wl, infos)).To(Succeed())

			var min *int32
			if sp := pj.Spec.RunPolicy.SchedulingPolicy; sp != nil {
				min = sp.MinAvailable
			}
			g.Expect(min).To(Equal(tc.wantMin))
			var vpgs volcanov1beta1.PodGroupList
			g.Expect(c.List(t.Context(), &vpgs)).To(Succeed())
			groups := len(vpgs.Items)
			if tc.provider == musterv1beta1.GangKubeScheduler {
				groups = countKubeGroups(t, c)
			}
			g.Expect(groups).To(Equal(tc.wantGroups))
			g.Expect(infos[1].Gang != nil).To(Equal(tc.wantMarks))
		})
	}
}

func schedulingAddToScheme(s *runtime.Scheme) error { return schedulingv1beta1.AddToScheme(s) }

func countKubeGroups(t *testing.T, c client.Client) int {
	var l schedulingv1beta1.PodGroupList
	if err := c.List(t.Context(), &l); err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

// A start that runs again (a conflict, a restart before the job was
// unsuspended) finds its pod group: one of this workload is brought to its
// counts, one of another workload (a job of the same name, deleted) is
// deleted and the start waits for it to go.
func TestStartAgainFindsItsPodGroup(t *testing.T) {
	g := NewWithT(t)
	s := schemeWith(t, AddToScheme, batchAddToScheme)
	cq := gangQueue(musterv1beta1.GangVolcano)
	wl := admittedWorkload("job-train-1", "this", 4)
	stale := func(owner string) *volcanov1beta1.PodGroup {
		return &volcanov1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "job-train-1", Namespace: "ns",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "muster.dev/v1beta1", Kind: "Workload", Name: "job-train-1", UID: types.UID(owner)}}},
			Spec: volcanov1beta1.PodGroupSpec{MinMember: 2}}
	}
	job := func() jobframework.GenericJob {
		return jobpkg.Kind.Adapt(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "ns"}})
	}
	infos := []jobframework.PodSetInfo{{Name: "main", Count: 4}}

	c := fake.NewClientBuilder().WithScheme(s).WithObjects(cq, stale("this")).Build()
	g.Expect(New(c, Config{}).Start(t.Context(), job(), "batch/job", wl, infos)).To(Succeed())
	var pg volcanov1beta1.PodGroup
	g.Expect(c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "job-train-1"}, &pg)).To(Succeed())
	g.Expect(pg.Spec.MinMember).To(Equal(int32(4)), "brought to this admission's count")

	c = fake.NewClientBuilder().WithScheme(s).WithObjects(cq, stale("earlier")).Build()
	err := New(c, Config{}).Start(t.Context(), job(), "batch/job", wl, infos)
	var wait *jobframework.RetryAfterError
	g.Expect(errors.As(err, &wait)).To(BeTrue(), "got %v", err)
	g.Expect(c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "job-train-1"}, &pg)).NotTo(Succeed(), "the earlier one is deleted")
}

func batchAddToScheme(s *runtime.Scheme) error { return batchv1.AddToScheme(s) }

// schemeWith is a scheme of Muster's API and the given others.
func schemeWith(t *testing.T, adds ...func(*runtime.Scheme) error) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{musterv1beta1.AddToScheme}, adds...) {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// gangQueue is a ClusterQueue handing its jobs to provider.
func gangQueue(provider musterv1beta1.GangSchedulerProvider) *musterv1beta1.ClusterQueue {
	return &musterv1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"},
		Spec: musterv1beta1.ClusterQueueSpec{GangScheduling: &musterv1beta1.GangScheduling{Provider: provider}}}
}

// admittedWorkload is a workload admitted by gangQueue with one pod set.
func admittedWorkload(name string, uid types.UID, count int32) *musterv1beta1.Workload {
	return &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid},
		Status: musterv1beta1.WorkloadStatus{Admission: &musterv1beta1.Admission{ClusterQueue: "cq",
			PodSetAssignments: []musterv1beta1.PodSetAssignment{{Name: "main", Count: ptr.To(count)}}}}}
}

// A start retried after it created its pod group, or a new admission of
// the same workload with other counts, changes only what the admission
// sets: replacing the spec would drop what the API server defaulted, some
// of it immutable (a scheduling.k8s.io PodGroup's spec.priority), and fail
// every retry. A group already as wanted is not written at all.
func TestStartAgainKeepsWhatTheAPIServerDefaulted(t *testing.T) {
	g := NewWithT(t)
	s := schemeWith(t, AddToScheme, batchAddToScheme)
	job := jobpkg.Kind.Adapt(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "ns"}})
	patches := 0
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(gangQueue(musterv1beta1.GangVolcano)).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
			return errors.New("spec.priority: Invalid value: null: field is immutable")
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			patches++
			return c.Patch(ctx, obj, p, opts...)
		},
	}).Build()
	start := func(count int32) error {
		return New(c, Config{}).Start(t.Context(), job, "batch/job", admittedWorkload("job-train-1", "this", count),
			[]jobframework.PodSetInfo{{Name: "main", Count: count}})
	}
	g.Expect(start(4)).To(Succeed(), "created")
	pg := &volcanov1beta1.PodGroup{}
	key := client.ObjectKey{Namespace: "ns", Name: "job-train-1"}
	g.Expect(c.Get(t.Context(), key, pg)).To(Succeed())
	pg.Spec.PriorityClassName = "defaulted-by-the-server"
	g.Expect(c.Update(t.Context(), pg, &client.UpdateOptions{})).NotTo(Succeed(), "the interceptor refuses every Update")
	g.Expect(c.Patch(t.Context(), pg, client.Merge)).To(Succeed())
	patches = 0

	g.Expect(start(4)).To(Succeed(), "found as wanted")
	g.Expect(patches).To(BeZero(), "a group already as wanted is not written")
	g.Expect(start(3)).To(Succeed(), "an admission with other counts")
	g.Expect(c.Get(t.Context(), key, pg)).To(Succeed())
	g.Expect(pg.Spec.MinMember).To(Equal(int32(3)))
	g.Expect(pg.Spec.MinTaskMember).To(Equal(map[string]int32{"main": 3}))
	g.Expect(pg.Spec.PriorityClassName).To(Equal("defaulted-by-the-server"), "a field the admission does not set is kept")
}
