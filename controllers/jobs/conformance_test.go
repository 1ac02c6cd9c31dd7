package jobs

import (
	"maps"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs/appwrapper"
	"github.com/musterhq/muster/controllers/jobs/job"
	"github.com/musterhq/muster/controllers/jobs/jobset"
	"github.com/musterhq/muster/controllers/jobs/mpijob"
	"github.com/musterhq/muster/controllers/jobs/pod"
	"github.com/musterhq/muster/controllers/jobs/pytorchjob"
	"github.com/musterhq/muster/controllers/jobs/raycluster"
	"github.com/musterhq/muster/controllers/jobs/rayjob"
	"github.com/musterhq/muster/controllers/jobs/trainjob"
	"github.com/musterhq/muster/internal/podrequests"
	"github.com/musterhq/muster/test/builder"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// fixture is a job of one kind with more than one pod set where the kind
// has them, and its pod templates, in pod set order.
type fixture func() (jobframework.GenericJob, []*corev1.PodTemplateSpec)

// fixtures has one job per registered kind: a kind registered without one
// fails TestEveryKindHasAFixture.
var fixtures = map[string]fixture{
	"batch/job": func() (jobframework.GenericJob, []*corev1.PodTemplateSpec) {
		j := builder.MakeJob("j", "ns").Parallelism(3).Request(gpu, "1").Obj()
		return (*job.Job)(j), []*corev1.PodTemplateSpec{&j.Spec.Template}
	},
	"kubeflow.org/pytorchjob": func() (jobframework.GenericJob, []*corev1.PodTemplateSpec) {
		j := builder.MakePyTorchJob("j", "ns").Replicas("Worker", 3).Request("Worker", gpu, "1").Obj()
		return (*pytorchjob.Job)(j), []*corev1.PodTemplateSpec{&j.Spec.PyTorchReplicaSpecs["Master"].Template, &j.Spec.PyTorchReplicaSpecs["Worker"].Template}
	},
	"ray.io/raycluster": func() (jobframework.GenericJob, []*corev1.PodTemplateSpec) {
		c := builder.MakeRayCluster("c", "ns").WorkerGroup("gpu", 3, gpu, "1").Obj()
		return (*raycluster.Cluster)(c), []*corev1.PodTemplateSpec{&c.Spec.HeadGroupSpec.Template, &c.Spec.WorkerGroupSpecs[0].Template}
	},
	"ray.io/rayjob": func() (jobframework.GenericJob, []*corev1.PodTemplateSpec) {
		cluster := builder.MakeRayCluster("c", "ns").WorkerGroup("gpu", 3, gpu, "1").Obj()
		j := builder.MakeRayJob("j", "ns", cluster.Spec).Obj()
		s := j.Spec.RayClusterSpec
		return (*rayjob.Job)(j), []*corev1.PodTemplateSpec{&s.HeadGroupSpec.Template, &s.WorkerGroupSpecs[0].Template, j.Spec.SubmitterPodTemplate}
	},
	"jobset.x-k8s.io/jobset": func() (jobframework.GenericJob, []*corev1.PodTemplateSpec) {
		js := builder.MakeJobSet("js", "ns").ReplicatedJob("driver", 1, 1, "cpu", "1").ReplicatedJob("workers", 2, 2, gpu, "1").Obj()
		return (*jobset.Job)(js), []*corev1.PodTemplateSpec{&js.Spec.ReplicatedJobs[0].Template.Spec.Template, &js.Spec.ReplicatedJobs[1].Template.Spec.Template}
	},
	"pod": func() (jobframework.GenericJob, []*corev1.PodTemplateSpec) {
		p := &podAsTemplate{tmpl: corev1.PodTemplateSpec{Spec: builder.MakePod("p", "ns").Request(gpu, "1").Obj().Spec}}
		return p, []*corev1.PodTemplateSpec{&p.tmpl}
	},
	"trainer.kubeflow.org/trainjob": func() (jobframework.GenericJob, []*corev1.PodTemplateSpec) {
		j := builder.MakeTrainJob("j", "ns", "torch").NumNodes(3).Obj()
		rt := builder.MakeClusterTrainingRuntime("torch").Initializer("dataset-initializer", "cpu", "1").Trainer("node", "cpu", "1").Obj()
		job, err := trainjob.Loaded(j, rt)
		if err != nil {
			panic(err)
		}
		return job, job.RuntimeTemplates()
	},
	"workload.codeflare.dev/appwrapper": func() (jobframework.GenericJob, []*corev1.PodTemplateSpec) {
		w := &appWrapperAsTemplates{jobs: []*batchv1.Job{
			builder.MakeJob("driver", "ns").Request("cpu", "1").Obj(),
			builder.MakeJob("workers", "ns").Parallelism(3).Request(gpu, "1").Obj()}}
		w.aw = builder.MakeAppWrapper("aw", "ns").Component(w.jobs[0]).Component(w.jobs[1]).Obj()
		return w, []*corev1.PodTemplateSpec{&w.jobs[0].Spec.Template, &w.jobs[1].Spec.Template}
	},
	"kubeflow.org/mpijob": func() (jobframework.GenericJob, []*corev1.PodTemplateSpec) {
		j := builder.MakeMPIJob("j", "ns", 3, gpu, "1").Obj()
		return (*mpijob.Job)(j), []*corev1.PodTemplateSpec{&j.Spec.MPIReplicaSpecs["Launcher"].Template, &j.Spec.MPIReplicaSpecs["Worker"].Template}
	},
}

// admittedAsPods are the kinds with no GenericJob: their Pods are pod
// groups, which the pod fixture and controllers/jobs/pod's tests cover.
var admittedAsPods = map[string]bool{"leaderworkerset.x-k8s.io/leaderworkerset": true}

func TestEveryKindHasAFixture(t *testing.T) {
	g := NewWithT(t)
	for _, i := range Registry().Integrations() {
		if !admittedAsPods[i.Name] {
			g.Expect(fixtures).To(HaveKey(i.Name), "add a fixture for %s to conformance_test.go", i.Name)
		}
	}
}

// eachKind runs f on every kind's fixture.
func eachKind(t *testing.T, f func(g Gomega, job jobframework.GenericJob, templates []*corev1.PodTemplateSpec)) {
	for _, name := range slices.Sorted(maps.Keys(fixtures)) {
		t.Run(name, func(t *testing.T) {
			job, templates := fixtures[name]()
			f(NewWithT(t), job, templates)
		})
	}
}

// The pod sets are the job's templates, one each, as its pods will have
// them: a GPU given only as a limit and an init container's request are
// what the shared requests path charges, for every kind alike.
func TestEveryKindsPodSetsAreItsTemplates(t *testing.T) {
	eachKind(t, func(g Gomega, job jobframework.GenericJob, templates []*corev1.PodTemplateSpec) {
		for _, tmpl := range templates {
			c := &tmpl.Spec.Containers[0]
			c.Resources.Requests = nil
			c.Resources.Limits = corev1.ResourceList{gpu: resource.MustParse("2")}
			tmpl.Spec.InitContainers = []corev1.Container{{Name: "warm-up", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}}}}
		}
		podSets := job.PodSets()
		g.Expect(podSets).To(HaveLen(len(templates)))
		names := map[string]bool{}
		for _, ps := range podSets {
			g.Expect(names).NotTo(HaveKey(ps.Name), "pod set names are unique")
			names[ps.Name] = true
			g.Expect(ps.Count).To(BeNumerically(">", 0))
			eff := podrequests.Effective(&ps.Template.Spec, nil, nil)
			g.Expect(eff.Containers[0].Resources.Requests).To(HaveKeyWithValue(gpu, resource.MustParse("2")), "pod set %s: the limit counts", ps.Name)
			g.Expect(eff.InitContainers).To(HaveLen(1), "pod set %s keeps its init container", ps.Name)
		}
	})
}

// Kueue's topology annotations on every template become every pod set's
// topology request.
func TestEveryKindsTemplatesCarryTheirTopology(t *testing.T) {
	eachKind(t, func(g Gomega, job jobframework.GenericJob, templates []*corev1.PodTemplateSpec) {
		for _, tmpl := range templates {
			tmpl.Annotations = map[string]string{musterv1beta1.KueuePrefix + "podset-required-topology": "topology.kubernetes.io/rack"}
		}
		for _, ps := range job.PodSets() {
			r := jobframework.TopologyRequestOf(&ps.Template, "")
			g.Expect(r).NotTo(BeNil(), "pod set %s", ps.Name)
			g.Expect(r.Required).To(HaveValue(Equal("topology.kubernetes.io/rack")))
		}
	})
}

// Starting places exactly each pod set's template and unsuspends; stopping
// gives back the templates the user wrote; a pod set the job does not have
// is an error, not a silent no-op.
func TestEveryKindStartsAndStopsWithItsTemplatesBack(t *testing.T) {
	eachKind(t, func(g Gomega, job jobframework.GenericJob, templates []*corev1.PodTemplateSpec) {
		templates[0].Spec.NodeSelector = map[string]string{"zone": "a"}
		job.Suspend()
		written := make([]*corev1.PodTemplateSpec, len(templates))
		for i, tmpl := range templates {
			written[i] = tmpl.DeepCopy()
		}
		podSets := job.PodSets()
		var run, restore []jobframework.PodSetInfo
		for i, ps := range podSets {
			run = append(run, jobframework.PodSetInfo{Name: ps.Name, Count: ps.Count,
				NodeSelector: map[string]string{"pool": ps.Name},
				Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}})
			restore = append(restore, jobframework.PodSetInfo{Name: ps.Name, Count: ps.Count,
				NodeSelector: written[i].Spec.NodeSelector, Tolerations: written[i].Spec.Tolerations})
		}
		g.Expect(job.RunWithPodSetsInfo(run)).To(Succeed())
		g.Expect(job.IsSuspended()).To(BeFalse())
		for i, ps := range podSets {
			g.Expect(placed(job, templates, i, ps.Name).Spec.NodeSelector).To(HaveKeyWithValue("pool", ps.Name), "pod set %s placed on its own template", ps.Name)
			g.Expect(placed(job, templates, i, ps.Name).Spec.Tolerations).To(HaveLen(1))
		}
		g.Expect(placed(job, templates, 0, podSets[0].Name).Spec.NodeSelector).To(HaveKeyWithValue("zone", "a"), "the user's selector is kept")

		job.Suspend()
		if _, ok := job.(jobframework.JobStoppedByDeletion); ok {
			g.Expect(job.RestorePodSetsInfo(restore)).To(BeFalse(), "a kind stopped by deletion has nothing to restore")
			g.Expect(job.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "no-such-pod-set", Count: 1}})).NotTo(Succeed())
			return
		}
		g.Expect(job.RestorePodSetsInfo(restore)).To(BeTrue())
		for i := range templates {
			g.Expect(placed(job, templates, i, podSets[i].Name)).To(Equal(written[i]), "pod set %s", podSets[i].Name)
		}
		g.Expect(job.RunWithPodSetsInfo([]jobframework.PodSetInfo{{Name: "no-such-pod-set", Count: 1}})).NotTo(Succeed())
	})
}

// renders is a kind whose placement is not written into the templates the
// user wrote but beside them (a TrainJob's runtime patch): what its pods
// get is rendered.
type renders interface {
	Rendered(podSet string) *corev1.PodTemplateSpec
}

// placed is the template a pod set's pods get.
func placed(job jobframework.GenericJob, templates []*corev1.PodTemplateSpec, i int, podSet string) *corev1.PodTemplateSpec {
	if r, ok := job.(renders); ok {
		return r.Rendered(podSet)
	}
	return templates[i]
}

// podAsTemplate is a Pod whose metadata and spec live in a template, so
// the tables can edit it as they edit the other kinds' templates; each
// call goes through the real adapter.
type podAsTemplate struct{ tmpl corev1.PodTemplateSpec }

var _ jobframework.JobStoppedByDeletion = (*podAsTemplate)(nil)

func (p *podAsTemplate) StoppedByDeletion() {}

// do runs f on the adapter of the Pod the template describes, and keeps
// what it changed.
func (p *podAsTemplate) do(f func(*pod.Pod)) {
	po := &pod.Pod{ObjectMeta: p.tmpl.ObjectMeta, Spec: p.tmpl.Spec}
	f(po)
	p.tmpl.ObjectMeta, p.tmpl.Spec = po.ObjectMeta, po.Spec
}

func (p *podAsTemplate) Object() client.Object {
	var o client.Object
	p.do(func(po *pod.Pod) { o = po.Object() })
	return o
}

func (p *podAsTemplate) IsSuspended() (b bool) {
	p.do(func(po *pod.Pod) { b = po.IsSuspended() })
	return
}
func (p *podAsTemplate) Suspend() { p.do(func(po *pod.Pod) { po.Suspend() }) }
func (p *podAsTemplate) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) (err error) {
	p.do(func(po *pod.Pod) { err = po.RunWithPodSetsInfo(infos) })
	return
}
func (p *podAsTemplate) RestorePodSetsInfo(infos []jobframework.PodSetInfo) (b bool) {
	p.do(func(po *pod.Pod) { b = po.RestorePodSetsInfo(infos) })
	return
}
func (p *podAsTemplate) PodSets() (ps []musterv1beta1.PodSet) {
	p.do(func(po *pod.Pod) { ps = po.PodSets() })
	return
}
func (p *podAsTemplate) Finished() (msg string, ok, done bool) {
	p.do(func(po *pod.Pod) { msg, ok, done = po.Finished() })
	return
}
func (p *podAsTemplate) PodsReady() (b bool) { p.do(func(po *pod.Pod) { b = po.PodsReady() }); return }
func (p *podAsTemplate) IsActive() (b bool)  { p.do(func(po *pod.Pod) { b = po.IsActive() }); return }

// appWrapperAsTemplates is an AppWrapper of Jobs whose pod templates live
// here, so the tables can edit them as they edit the other kinds'
// templates: each call writes them into its components and goes through
// the real adapter. Rendered is what the AppWrapper controller makes of a
// component's template and Muster's podSetInfo.
type appWrapperAsTemplates struct {
	jobs []*batchv1.Job
	aw   *awv1beta2.AppWrapper
}

func (w *appWrapperAsTemplates) do() *appwrapper.Job {
	for i, j := range w.jobs {
		c := builder.MakeAppWrapper("x", "ns").Component(j).Obj().Spec.Components[0]
		w.aw.Spec.Components[i].Template = c.Template
	}
	return (*appwrapper.Job)(w.aw)
}

func (w *appWrapperAsTemplates) Object() client.Object { return w.do().Object() }
func (w *appWrapperAsTemplates) IsSuspended() bool     { return w.do().IsSuspended() }
func (w *appWrapperAsTemplates) Suspend()              { w.do().Suspend() }
func (w *appWrapperAsTemplates) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	return w.do().RunWithPodSetsInfo(infos)
}
func (w *appWrapperAsTemplates) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	return w.do().RestorePodSetsInfo(infos)
}
func (w *appWrapperAsTemplates) PodSets() []musterv1beta1.PodSet { return w.do().PodSets() }
func (w *appWrapperAsTemplates) Finished() (string, bool, bool)  { return w.do().Finished() }
func (w *appWrapperAsTemplates) PodsReady() bool                 { return w.do().PodsReady() }
func (w *appWrapperAsTemplates) IsActive() bool                  { return w.do().IsActive() }

func (w *appWrapperAsTemplates) Rendered(podSet string) *corev1.PodTemplateSpec {
	for i, ps := range w.do().PodSets() {
		if ps.Name != podSet {
			continue
		}
		t := w.jobs[i].Spec.Template.DeepCopy()
		infos := w.aw.Spec.Components[i].PodSetInfos
		if len(infos) == 0 {
			return t
		}
		info := infos[0]
		t.Labels, t.Annotations = merged(t.Labels, info.Labels), merged(t.Annotations, info.Annotations)
		t.Spec.NodeSelector = merged(t.Spec.NodeSelector, info.NodeSelector)
		t.Spec.Tolerations = append(t.Spec.Tolerations, info.Tolerations...)
		t.Spec.SchedulingGates = append(t.Spec.SchedulingGates, info.SchedulingGates...)
		return t
	}
	return nil
}

func merged(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}
