package harness

import (
	"encoding/json"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// wlView is what the harness reads from a Workload of either system.
type wlView struct {
	Key             string
	Namespace, Name string
	ResourceVersion string
	Class           string
	RuntimeMs       int
	HasAdmission    bool
	Conditions      []metav1.Condition
}

func (w *wlView) is(condType string) bool { return meta.IsStatusConditionTrue(w.Conditions, condType) }

// Admitted: quota reserved and the Admitted condition set (neither system
// has admission checks here, so both come in the same write).
func (w *wlView) Admitted() bool { return w.HasAdmission && w.is("Admitted") }
func (w *wlView) Evicted() bool  { return w.is("Evicted") }
func (w *wlView) Finished() bool { return w.is("Finished") }

// viewOf decodes the parts of a Workload the harness needs.
func viewOf(u *unstructured.Unstructured) (*wlView, error) {
	v := &wlView{
		Namespace: u.GetNamespace(), Name: u.GetName(), ResourceVersion: u.GetResourceVersion(),
		Class: u.GetLabels()[ClassLabel],
	}
	v.Key = v.Namespace + "/" + v.Name
	v.RuntimeMs, _ = strconv.Atoi(u.GetLabels()[RuntimeLabel])
	status, _, _ := unstructured.NestedMap(u.Object, "status")
	if status == nil {
		return v, nil
	}
	v.HasAdmission = status["admission"] != nil
	if conds, ok := status["conditions"].([]any); ok {
		for _, c := range conds {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			var cond metav1.Condition
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond); err != nil {
				return nil, err
			}
			v.Conditions = append(v.Conditions, cond)
		}
	}
	return v, nil
}

// statusPatch is a JSON merge patch of a Workload's status that only
// applies to the version it was computed from (resourceVersion is a
// precondition), so it never overwrites what the controller wrote since.
func statusPatch(rv string, conds []metav1.Condition, clearAdmission bool) ([]byte, error) {
	status := map[string]any{"conditions": conds}
	if clearAdmission {
		status["admission"] = nil
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": rv}, "status": status})
}

func unstructuredOf(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

// topologyAssignment is the first pod set's topologyAssignment of the
// workload's admission (the mixes have one pod set), or nil.
func topologyAssignment(u *unstructured.Unstructured) map[string]any {
	psas, _, _ := unstructured.NestedSlice(u.Object, "status", "admission", "podSetAssignments")
	if len(psas) == 0 {
		return nil
	}
	psa, _ := psas[0].(map[string]any)
	ta, _ := psa["topologyAssignment"].(map[string]any)
	return ta
}
