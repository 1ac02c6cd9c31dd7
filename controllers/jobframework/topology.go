package jobframework

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// The podset-*-topology annotations of a pod template, read under
// muster.dev/ or, unchanged, Kueue's kueue.x-k8s.io/ (Muster's wins when
// both are set), become the pod set's topologyRequest. The rules and
// messages follow Kueue's job webhook, so a manifest Kueue refuses is
// refused here for the same reason.

// topologyAnnotation reads one annotation under either prefix, returning
// the key it was found under.
func topologyAnnotation(t *corev1.PodTemplateSpec, muster string) (string, string, bool) {
	if v, ok := t.Annotations[muster]; ok {
		return muster, v, true
	}
	kueue := musterv1beta1.KueuePrefix + strings.TrimPrefix(muster, "muster.dev/")
	v, ok := t.Annotations[kueue]
	return kueue, v, ok
}

// TopologyRequestOf is the topology request of a pod template's
// annotations, nil when it has none. Invalid annotations are left out;
// ValidateTopologyAnnotations says why.
func TopologyRequestOf(t *corev1.PodTemplateSpec, podIndexLabel string) *musterv1beta1.PodSetTopologyRequest {
	r := &musterv1beta1.PodSetTopologyRequest{}
	_, required, hasRequired := topologyAnnotation(t, musterv1beta1.PodSetRequiredTopologyAnnotation)
	_, preferred, hasPreferred := topologyAnnotation(t, musterv1beta1.PodSetPreferredTopologyAnnotation)
	_, unconstrained, hasUnconstrained := topologyAnnotation(t, musterv1beta1.PodSetUnconstrainedTopologyAnnotation)
	_, sliceLevel, hasSlice := topologyAnnotation(t, musterv1beta1.PodSetSliceRequiredTopologyAnnotation)
	_, sliceSize, hasSize := topologyAnnotation(t, musterv1beta1.PodSetSliceSizeAnnotation)
	_, group, hasGroup := topologyAnnotation(t, musterv1beta1.PodSetGroupNameAnnotation)
	switch {
	case hasRequired:
		r.Required = ptr.To(required)
	case hasPreferred:
		r.Preferred = ptr.To(preferred)
	case hasUnconstrained:
		if b, err := strconv.ParseBool(unconstrained); err == nil && b {
			r.Unconstrained = ptr.To(true)
		}
	}
	if n, err := strconv.ParseInt(sliceSize, 10, 32); hasSlice && hasSize && err == nil && n >= 1 {
		r.PodSetSliceRequiredTopology, r.PodSetSliceSize = ptr.To(sliceLevel), ptr.To(int32(n))
	}
	if hasGroup && (r.Required != nil || r.Preferred != nil) {
		r.PodSetGroupName = ptr.To(group)
	}
	if *r == (musterv1beta1.PodSetTopologyRequest{}) {
		return nil
	}
	if podIndexLabel != "" {
		r.PodIndexLabel = ptr.To(podIndexLabel)
	}
	return r
}

// ValidateTopologyAnnotations checks a pod set's topology annotations.
func ValidateTopologyAnnotations(ps *musterv1beta1.PodSet, path *field.Path) field.ErrorList {
	t := &ps.Template
	var errs field.ErrorList
	annotations := path.Child("template", "metadata", "annotations")
	var modes []string
	for _, a := range []string{musterv1beta1.PodSetRequiredTopologyAnnotation, musterv1beta1.PodSetPreferredTopologyAnnotation, musterv1beta1.PodSetUnconstrainedTopologyAnnotation} {
		if k, _, ok := topologyAnnotation(t, a); ok {
			modes = append(modes, k)
		}
	}
	if len(modes) > 1 {
		errs = append(errs, field.Invalid(annotations, modes, "must not contain more than one topology annotation: "+strings.Join(modes, ", ")))
	}
	for _, a := range []string{musterv1beta1.PodSetRequiredTopologyAnnotation, musterv1beta1.PodSetPreferredTopologyAnnotation, musterv1beta1.PodSetSliceRequiredTopologyAnnotation} {
		if k, v, ok := topologyAnnotation(t, a); ok {
			errs = append(errs, metavalidation.ValidateLabelName(v, annotations.Key(k))...)
		}
	}
	if k, v, ok := topologyAnnotation(t, musterv1beta1.PodSetUnconstrainedTopologyAnnotation); ok {
		if _, err := strconv.ParseBool(v); err != nil {
			errs = append(errs, field.Invalid(annotations.Key(k), v, "must be a boolean value"))
		}
	}
	errs = append(errs, validateSlices(ps, annotations)...)
	return append(errs, validateGroup(t, annotations)...)
}

func validateSlices(ps *musterv1beta1.PodSet, annotations *field.Path) field.ErrorList {
	t := &ps.Template
	sliceKey, _, hasSlice := topologyAnnotation(t, musterv1beta1.PodSetSliceRequiredTopologyAnnotation)
	sizeKey, size, hasSize := topologyAnnotation(t, musterv1beta1.PodSetSliceSizeAnnotation)
	switch {
	case hasSlice && !hasSize:
		return field.ErrorList{field.Required(annotations.Key(sizeKey), "must be set when '"+sliceKey+"' is specified")}
	case hasSize && !hasSlice:
		return field.ErrorList{field.Forbidden(annotations.Key(sizeKey), "may not be set when '"+sliceKey+"' is not specified")}
	case !hasSize:
		return nil
	}
	n, err := strconv.ParseInt(size, 10, 32)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(annotations.Key(sizeKey), size, "must be a numeric value")}
	case n < 1:
		return field.ErrorList{field.Invalid(annotations.Key(sizeKey), size, "must be greater than or equal to 1")}
	case int32(n) > ps.Count:
		return field.ErrorList{field.Invalid(annotations.Key(sizeKey), size, "must not be greater than pod set count "+strconv.Itoa(int(ps.Count)))}
	case ps.Count%int32(n) != 0:
		return field.ErrorList{field.Invalid(annotations.Key(sizeKey), size, "must divide the pod set count "+strconv.Itoa(int(ps.Count)))}
	}
	return nil
}

func validateGroup(t *corev1.PodTemplateSpec, annotations *field.Path) field.ErrorList {
	key, v, ok := topologyAnnotation(t, musterv1beta1.PodSetGroupNameAnnotation)
	if !ok {
		return nil
	}
	p := annotations.Key(key)
	_, _, required := topologyAnnotation(t, musterv1beta1.PodSetRequiredTopologyAnnotation)
	_, _, preferred := topologyAnnotation(t, musterv1beta1.PodSetPreferredTopologyAnnotation)
	sliceKey, _, slice := topologyAnnotation(t, musterv1beta1.PodSetSliceRequiredTopologyAnnotation)
	switch {
	case v == "":
		return field.ErrorList{field.Invalid(p, v, "must not be empty")}
	case slice:
		return field.ErrorList{field.Forbidden(p, "may not be set when '"+sliceKey+"' is specified")}
	case !required && !preferred:
		return field.ErrorList{field.Forbidden(p, "may not be set when neither a required nor a preferred topology is specified")}
	}
	return nil
}

// validateTopologyGroups checks that the pod sets sharing a group name ask
// for the same level in the same way: they are placed in one domain.
func validateTopologyGroups(podSets []musterv1beta1.PodSet) field.ErrorList {
	var errs field.ErrorList
	first := map[string]*musterv1beta1.PodSetTopologyRequest{}
	for _, ps := range podSets {
		r := TopologyRequestOf(&ps.Template, "")
		if r == nil || r.PodSetGroupName == nil {
			continue
		}
		g := *r.PodSetGroupName
		if f, ok := first[g]; !ok {
			first[g] = r
		} else if !ptr.Equal(f.Required, r.Required) || !ptr.Equal(f.Preferred, r.Preferred) {
			errs = append(errs, field.Invalid(field.NewPath("podSets").Key(ps.Name).Child("template", "metadata", "annotations"), g,
				"pod sets of topology group "+g+" must ask for the same required or preferred topology"))
		}
	}
	return errs
}

// validateTopology checks the topology annotations of all a job's pod sets.
func validateTopology(job GenericJob) field.ErrorList {
	podSets := job.PodSets()
	var errs field.ErrorList
	for i := range podSets {
		errs = append(errs, ValidateTopologyAnnotations(&podSets[i], field.NewPath("podSets").Key(podSets[i].Name))...)
	}
	return append(errs, validateTopologyGroups(podSets)...)
}
