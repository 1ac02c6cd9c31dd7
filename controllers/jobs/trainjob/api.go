package trainjob

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// trainJob is what Muster reads of a TrainJob (the trainer's TrainJob type,
// only these fields).
type trainJob struct {
	Spec struct {
		RuntimeRef struct {
			Name     string  `json:"name"`
			APIGroup *string `json:"apiGroup,omitempty"`
			Kind     *string `json:"kind,omitempty"`
		} `json:"runtimeRef"`
		Trainer *struct {
			NumNodes         *int32                       `json:"numNodes,omitempty"`
			ResourcesPerNode *corev1.ResourceRequirements `json:"resourcesPerNode,omitempty"`
		} `json:"trainer,omitempty"`
		RuntimePatches []runtimePatch `json:"runtimePatches,omitempty"`
	} `json:"spec"`
	Status struct {
		Conditions []metav1.Condition `json:"conditions,omitempty"`
		JobsStatus []struct {
			Name      string `json:"name"`
			Ready     *int32 `json:"ready,omitempty"`
			Succeeded *int32 `json:"succeeded,omitempty"`
			Active    *int32 `json:"active,omitempty"`
		} `json:"jobsStatus,omitempty"`
	} `json:"status"`
}

// runtimePatch is one entry of spec.runtimePatches; each replicated job's
// template patch is kept as written, for the strategic merge.
type runtimePatch struct {
	Manager             string `json:"manager"`
	TrainingRuntimeSpec *struct {
		Template *struct {
			Spec *struct {
				ReplicatedJobs []struct {
					Name     string          `json:"name"`
					Template json.RawMessage `json:"template,omitempty"`
				} `json:"replicatedJobs,omitempty"`
			} `json:"spec,omitempty"`
		} `json:"template,omitempty"`
	} `json:"trainingRuntimeSpec,omitempty"`
}

// runtimeSpec is what Muster reads of a (Cluster)TrainingRuntime's spec.
type runtimeSpec struct {
	MLPolicy *struct {
		NumNodes *int32 `json:"numNodes,omitempty"`
		MPI      *struct {
			RunLauncherAsNode *bool `json:"runLauncherAsNode,omitempty"`
		} `json:"mpi,omitempty"`
	} `json:"mlPolicy,omitempty"`
	Template struct {
		Spec jobsetv1alpha2.JobSetSpec `json:"spec"`
	} `json:"template"`
}

func (t *trainJob) runtimeKind() string {
	return ptr.Deref(t.Spec.RuntimeRef.Kind, clusterTrainingRuntimeKind)
}

func (t *trainJob) runtimeGroup() string {
	return ptr.Deref(t.Spec.RuntimeRef.APIGroup, GroupVersion.Group)
}

// view reads the TrainJob's fields Muster needs. A TrainJob the API server
// accepted always reads; a field of another shape reads as unset.
func (j *Job) view() *trainJob {
	var t trainJob
	if b, err := json.Marshal(j.obj.Object); err == nil {
		_ = json.Unmarshal(b, &t)
	}
	return &t
}

func parseRuntime(rt *unstructured.Unstructured) (*runtimeSpec, error) {
	spec, _, _ := unstructured.NestedMap(rt.Object, "spec")
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var out runtimeSpec
	return &out, json.Unmarshal(b, &out)
}

// The placement Muster writes into its runtime patch.
type (
	placementTemplate struct {
		Spec struct {
			Template podTemplatePatch `json:"template"`
		} `json:"spec"`
	}
	podTemplatePatch struct {
		Metadata *podMetadataPatch `json:"metadata,omitempty"`
		Spec     podSpecPatch      `json:"spec"`
	}
	podMetadataPatch struct {
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	}
	podSpecPatch struct {
		NodeSelector    map[string]string          `json:"nodeSelector,omitempty"`
		Tolerations     []corev1.Toleration        `json:"tolerations,omitempty"`
		SchedulingGates []corev1.PodSchedulingGate `json:"schedulingGates,omitempty"`
	}
	runtimeSpecPatch struct {
		Template struct {
			Spec struct {
				ReplicatedJobs []replicatedJobPlacement `json:"replicatedJobs"`
			} `json:"spec"`
		} `json:"template"`
	}
	replicatedJobPlacement struct {
		Name     string            `json:"name"`
		Template placementTemplate `json:"template"`
	}
)
