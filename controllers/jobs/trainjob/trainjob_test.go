package trainjob

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/musterhq/muster/controllers/jobframework"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// object reads a manifest into an unstructured object.
func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// torch is the trainer's torch-distributed runtime, with a node selector
// of its own.
const torch = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 1, torch: {numProcPerNode: auto}}
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        replicas: 1
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
          spec:
            template:
              spec:
                containers: [{name: dataset-initializer, image: init, resources: {requests: {cpu: "1"}}}]
      - name: node
        replicas: 1
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                nodeSelector: {zone: a}
                containers: [{name: node, image: pytorch, resources: {requests: {cpu: "2"}}}]
`

// deepspeed is the trainer's MPI runtime whose launcher is a node too.
const deepspeed = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: deepspeed-distributed}
spec:
  mlPolicy: {numNodes: 1, mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, runLauncherAsNode: true}}
  template:
    spec:
      replicatedJobs:
      - name: launcher
        replicas: 1
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers: [{name: node, image: deepspeed}]
      - name: node
        replicas: 1
        template:
          spec:
            template:
              spec:
                containers: [{name: node, image: deepspeed}]
`

func newTrainJob(t *testing.T, runtime string, extra string) *Job {
	t.Helper()
	u := object(t, `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: llm, namespace: ns, labels: {kueue.x-k8s.io/queue-name: main}}
spec:
  runtimeRef: {name: `+runtime+`}
`+extra)
	return &Job{obj: u}
}

// loaded is a TrainJob with its runtime read.
func loaded(t *testing.T, rt, extra string) *Job {
	t.Helper()
	r := object(t, rt)
	j := newTrainJob(t, r.GetName(), extra)
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(r).Build()
	if err := j.LoadRelated(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return j
}

// The pods are those the trainer will make: an initializer's one pod, the
// TrainJob's numNodes trainer pods (over the runtime's), its
// resourcesPerNode on the trainer container, a GPU given only as a limit
// charged.
func TestPodSetsAreTheTrainersJobSet(t *testing.T) {
	g := NewWithT(t)
	j := loaded(t, torch, `
  trainer:
    numNodes: 4
    resourcesPerNode: {limits: {nvidia.com/gpu: "2"}}
`)
	ps := j.PodSets()
	g.Expect(ps).To(HaveLen(2))
	g.Expect(ps[0].Name).To(Equal("dataset-initializer"))
	g.Expect(ps[0].Count).To(Equal(int32(1)))
	g.Expect(ps[1].Name).To(Equal("node"))
	g.Expect(ps[1].Count).To(Equal(int32(4)))
	g.Expect(ps[1].Template.Spec.Containers[0].Resources.Limits).To(HaveKeyWithValue(gpu, resource.MustParse("2")))
	g.Expect(ps[1].Template.Spec.Containers[0].Resources.Requests).To(BeEmpty(), "resourcesPerNode replaces the runtime's")
	g.Expect(j.SubGroups("node")).To(Equal(int32(1)))

	plain := loaded(t, torch, "")
	g.Expect(plain.PodSets()[1].Count).To(Equal(int32(1)), "the runtime's numNodes")
}

// An MPI runtime running its launcher as a node: numNodes counts the
// launcher, the node job gets the rest and the resources.
func TestMPILauncherAsNode(t *testing.T) {
	g := NewWithT(t)
	j := loaded(t, deepspeed, `
  trainer:
    numNodes: 4
    resourcesPerNode: {requests: {nvidia.com/gpu: "1"}}
`)
	ps := j.PodSets()
	g.Expect(ps).To(HaveLen(2))
	g.Expect([]int32{ps[0].Count, ps[1].Count}).To(Equal([]int32{1, 3}))
	for _, p := range ps {
		g.Expect(p.Template.Spec.Containers[0].Resources.Requests).To(HaveKeyWithValue(gpu, resource.MustParse("1")), p.Name)
	}
}

// Another manager's runtime patch is part of the pods Muster places.
func TestOtherRuntimePatchesAreMerged(t *testing.T) {
	g := NewWithT(t)
	j := loaded(t, torch, `
  runtimePatches:
  - manager: example.com/team
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  spec:
                    nodeSelector: {pool: h100}
                    tolerations: [{key: team, operator: Exists}]
`)
	node := j.PodSets()[1].Template.Spec
	g.Expect(node.NodeSelector).To(Equal(map[string]string{"zone": "a", "pool": "h100"}))
	g.Expect(node.Tolerations).To(HaveLen(1))
}

// Admission writes the placement into Muster's own runtime patch and
// resumes; stopping empties that patch and leaves the others alone; a
// pod set the TrainJob does not have is an error.
func TestPlacementGoesIntoMustersRuntimePatch(t *testing.T) {
	g := NewWithT(t)
	j := loaded(t, torch, `
  suspend: true
  runtimePatches:
  - manager: example.com/team
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template: {spec: {template: {spec: {tolerations: [{key: team, operator: Exists}]}}}}
`)
	infos := []jobframework.PodSetInfo{
		{Name: "dataset-initializer", Count: 1, NodeSelector: map[string]string{"pool": "cpu"}},
		{Name: "node", Count: 1, NodeSelector: map[string]string{"pool": "gpu"},
			Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}},
			Topology:    &jobframework.TopologyInfo{Workload: "wl", Gate: true}},
	}
	g.Expect(j.RunWithPodSetsInfo(infos)).To(Succeed())
	g.Expect(j.IsSuspended()).To(BeFalse())
	node := j.Rendered("node")
	g.Expect(node.Spec.NodeSelector).To(Equal(map[string]string{"zone": "a", "pool": "gpu"}))
	g.Expect(node.Spec.Tolerations).To(HaveLen(2), "the team's toleration and the flavor's")
	g.Expect(node.Spec.SchedulingGates).To(HaveLen(1))
	g.Expect(node.Annotations).To(HaveKey("muster.dev/workload"))
	g.Expect(j.Rendered("dataset-initializer").Spec.NodeSelector).To(Equal(map[string]string{"pool": "cpu"}))
	g.Expect(j.PodSets()[1].Template.Spec.NodeSelector).To(Equal(map[string]string{"zone": "a"}), "pod sets are the user's pods")

	j.Suspend()
	g.Expect(j.RestorePodSetsInfo(nil)).To(BeTrue())
	g.Expect(j.RestorePodSetsInfo(nil)).To(BeFalse(), "nothing left to restore")
	g.Expect(j.Rendered("node").Spec).To(Equal(j.PodSets()[1].Template.Spec))
	g.Expect(j.view().Spec.RuntimePatches).To(HaveLen(2), "the team's patch and Muster's, empty")

	g.Expect(j.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "no-such", Count: 1}})).NotTo(Succeed())
}

// A runtime that does not exist is a NotFound error naming it; a runtime
// kind the trainer does not know is refused.
func TestRuntimeReference(t *testing.T) {
	g := NewWithT(t)
	j := newTrainJob(t, "missing", "")
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build()
	err := j.LoadRelated(context.Background(), c)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	g.Expect(err.Error()).To(ContainSubstring(`ClusterTrainingRuntime "missing" does not exist`))
	g.Expect(j.PodSets()).To(BeEmpty())

	ns := newTrainJob(t, "local", "")
	_ = unstructured.SetNestedField(ns.obj.Object, "TrainingRuntime", "spec", "runtimeRef", "kind")
	rt := object(t, `{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainingRuntime, metadata: {name: local, namespace: ns},
  spec: {template: {spec: {replicatedJobs: [{name: node, replicas: 1, template: {spec: {parallelism: 2, template: {spec: {containers: [{name: node}]}}}}}]}}}}`)
	c = fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(rt).Build()
	g.Expect(ns.LoadRelated(context.Background(), c)).To(Succeed())
	g.Expect(ns.PodSets()).To(ConsistOf(HaveField("Count", int32(2))), "no mlPolicy: the template's parallelism")

	bad := newTrainJob(t, "x", "")
	_ = unstructured.SetNestedField(bad.obj.Object, "Deployment", "spec", "runtimeRef", "kind")
	g.Expect(bad.ValidateQueued()).To(ConsistOf(HaveField("Field", "spec.runtimeRef.kind")))
	g.Expect(j.ValidateQueued()).To(BeEmpty())
}

// Finished on the trainer's conditions; active while a child Job runs.
func TestStatus(t *testing.T) {
	g := NewWithT(t)
	j := loaded(t, torch, `
status:
  jobsStatus: [{name: node, active: 1, ready: 1}, {name: dataset-initializer, succeeded: 1}]
`)
	g.Expect(j.IsActive()).To(BeTrue())
	g.Expect(j.TemplateLocked()).To(BeTrue())
	g.Expect(j.PodsReady()).To(BeTrue())
	_, _, done := j.Finished()
	g.Expect(done).To(BeFalse())
	_ = unstructured.SetNestedSlice(j.obj.Object, []any{map[string]any{"type": "Complete", "status": "True", "message": "done",
		"reason": "JobSetCompleted", "lastTransitionTime": "2026-01-01T00:00:00Z"}}, "status", "conditions")
	msg, ok, done := j.Finished()
	g.Expect([]any{msg, ok, done}).To(Equal([]any{"done", true, true}))
}
