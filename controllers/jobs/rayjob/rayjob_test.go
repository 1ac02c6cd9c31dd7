package rayjob

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/controllers/jobframework"
)

func rayJob(mode rayv1.JobSubmissionMode) *Job {
	head := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.41.0"}}}}
	return &Job{Spec: rayv1.RayJobSpec{
		Suspend: true, ShutdownAfterJobFinishes: true, SubmissionMode: mode,
		RayClusterSpec: &rayv1.RayClusterSpec{
			HeadGroupSpec:    rayv1.HeadGroupSpec{Template: head},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "gpu", Replicas: ptr.To[int32](3), MinReplicas: ptr.To[int32](1)}},
		},
	}}
}

// The pod sets are the cluster's (head, then each worker group, admitted
// whole: no partial admission for a RayJob's workers) and the submitter Job
// when KubeRay submits from one — the CRD's default mode.
func TestPodSetsOfEachSubmissionMode(t *testing.T) {
	for _, tc := range []struct {
		mode rayv1.JobSubmissionMode
		want []string
	}{
		{"", []string{"head", "worker-gpu", "submitter"}},
		{rayv1.K8sJobMode, []string{"head", "worker-gpu", "submitter"}},
		{rayv1.HTTPMode, []string{"head", "worker-gpu"}},
		{rayv1.SidecarMode, []string{"head", "worker-gpu"}},
		{rayv1.InteractiveMode, []string{"head", "worker-gpu"}},
	} {
		ps := rayJob(tc.mode).PodSets()
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
		}
		if strings.Join(names, ",") != strings.Join(tc.want, ",") {
			t.Errorf("mode %q: pod sets %v, want %v", tc.mode, names, tc.want)
		}
		if ps[1].Count != 3 || ps[1].MinCount != nil {
			t.Errorf("mode %q: workers %d (min %v), want 3 admitted whole", tc.mode, ps[1].Count, ps[1].MinCount)
		}
	}
}

// A submitter without a template of its own counts what KubeRay's default
// submitter requests; in SidecarMode that container joins the head pod.
func TestTheDefaultSubmitterIsCounted(t *testing.T) {
	ps := rayJob(rayv1.K8sJobMode).PodSets()
	sub := ps[2].Template.Spec.Containers[0]
	if sub.Image != "rayproject/ray:2.41.0" || !sub.Resources.Requests.Cpu().Equal(resource.MustParse("500m")) {
		t.Errorf("submitter %s requests %v, want the head's image and 500m", sub.Image, sub.Resources.Requests)
	}
	head := rayJob(rayv1.SidecarMode).PodSets()[0].Template.Spec.Containers
	if len(head) != 2 || head[1].Name != "ray-job-submitter" {
		t.Errorf("sidecar head containers %v, want the submitter beside ray-head", head)
	}
}

// Starting places every pod set, the default submitter too (written into
// the RayJob so that KubeRay's submitter Job carries it); stopping puts the
// placement back.
func TestRunPlacesTheClusterAndTheSubmitter(t *testing.T) {
	j := rayJob("")
	sel := map[string]string{"gpu": "a100"}
	infos := []jobframework.PodSetInfo{{Name: "head", Count: 1, NodeSelector: sel}, {Name: "worker-gpu", Count: 3, NodeSelector: sel}, {Name: "submitter", Count: 1, NodeSelector: sel}}
	if err := j.RunWithPodSetsInfo(infos); err != nil {
		t.Fatal(err)
	}
	if j.Spec.Suspend || j.Spec.SubmitterPodTemplate == nil || j.Spec.SubmitterPodTemplate.Spec.NodeSelector["gpu"] != "a100" ||
		j.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.NodeSelector["gpu"] != "a100" {
		t.Fatalf("after run: suspend %v, submitter %v, workers %v", j.Spec.Suspend, j.Spec.SubmitterPodTemplate, j.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.NodeSelector)
	}
	j.Suspend()
	restore := []jobframework.PodSetInfo{{Name: "head", Count: 1}, {Name: "worker-gpu", Count: 3}, {Name: "submitter", Count: 1}}
	if !j.RestorePodSetsInfo(restore) {
		t.Fatal("restore changed nothing")
	}
	if len(j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.NodeSelector) != 0 || len(j.Spec.SubmitterPodTemplate.Spec.NodeSelector) != 0 {
		t.Error("the placement was not put back")
	}
}

// What Muster cannot admit whole is refused with a reason a user can act on.
func TestValidateQueued(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*Job)
		want string
	}{
		"fits": {func(*Job) {}, ""},
		"an existing cluster": {func(j *Job) {
			j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "shared"}
			j.Spec.RayClusterSpec = nil
		}, "spec.clusterSelector"},
		"no cluster":           {func(j *Job) { j.Spec.RayClusterSpec = nil }, "spec.rayClusterSpec"},
		"cluster kept after":   {func(j *Job) { j.Spec.ShutdownAfterJobFinishes = false }, "spec.shutdownAfterJobFinishes"},
		"autoscaling":          {func(j *Job) { j.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true) }, "spec.rayClusterSpec.enableInTreeAutoscaling"},
		"selector and cluster": {func(j *Job) { j.Spec.ClusterSelector = map[string]string{"a": "b"} }, "spec.clusterSelector"},
	} {
		t.Run(name, func(t *testing.T) {
			j := rayJob("")
			tc.edit(j)
			errs := j.ValidateQueued()
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tc.want != "" && (len(errs) == 0 || errs[0].Field != tc.want):
				t.Errorf("errors %v, want one on %s", errs, tc.want)
			}
		})
	}
}

// The job is over when KubeRay's deployment is; it succeeded when the Ray
// job did.
func TestFinished(t *testing.T) {
	j := rayJob("")
	if _, _, done := j.Finished(); done || j.IsActive() {
		t.Fatal("a new RayJob is finished or active")
	}
	j.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	if !j.IsActive() {
		t.Error("a running RayJob is not active")
	}
	j.Status.JobDeploymentStatus, j.Status.JobStatus, j.Status.Message = rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded, "done"
	if msg, ok, done := j.Finished(); !done || !ok || msg != "done" {
		t.Errorf("complete: %q %v %v", msg, ok, done)
	}
	j.Status.JobDeploymentStatus, j.Status.JobStatus = rayv1.JobDeploymentStatusFailed, rayv1.JobStatusFailed
	if _, ok, done := j.Finished(); !done || ok {
		t.Errorf("failed: succeeded %v, finished %v", ok, done)
	}
}
