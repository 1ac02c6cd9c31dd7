package gang

import (
	"context"
	"reflect"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// kindOf names an object's kind for messages.
func kindOf(obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return reflect.TypeOf(obj).Elem().Name()
}

// ownedBy reports whether obj is owned by this Workload: by UID, so a
// workload of the same name created again does not count.
func ownedBy(obj client.Object, wl *musterv1beta1.Workload) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == wl.UID {
			return true
		}
	}
	return false
}

// updateCounts brings a pod group left by an earlier admission of the
// same workload (or by this start, retried) to this one. Only what want
// sets changes: the API server defaulted other fields, some immutable
// (scheduling.k8s.io PodGroup's spec.priority), and so are the topology
// constraints the group was created with.
func (h *HandOff) updateCounts(ctx context.Context, old, want client.Object) error {
	keepConstraints(old, want)
	_, err := h.patchSpec(ctx, old, want)
	return err
}

// patchSpec overlays want's spec on old and patches what changed; it
// reports whether anything did.
func (h *HandOff) patchSpec(ctx context.Context, old, want client.Object) (bool, error) {
	if sameSpec(old, want) {
		return false, nil
	}
	base := old.DeepCopyObject().(client.Object)
	if err := overlaySpec(old, want); err != nil {
		return false, err
	}
	return true, h.client.Patch(ctx, old, client.MergeFrom(base))
}

// sameSpec reports whether two pod groups' specs are alike in every field
// want sets (the API server may have defaulted others on old).
func sameSpec(old, want client.Object) bool {
	o, err1 := runtime.DefaultUnstructuredConverter.ToUnstructured(old)
	w, err2 := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err1 != nil || err2 != nil {
		return false
	}
	oldSpec, _ := o["spec"].(map[string]any)
	wantSpec, _ := w["spec"].(map[string]any)
	return contains(oldSpec, wantSpec)
}

// overlaySpec sets on old every spec field want sets, keeping the others.
func overlaySpec(old, want client.Object) error {
	o, err := runtime.DefaultUnstructuredConverter.ToUnstructured(old)
	if err != nil {
		return err
	}
	w, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return err
	}
	oldSpec, _ := o["spec"].(map[string]any)
	wantSpec, _ := w["spec"].(map[string]any)
	if oldSpec == nil {
		oldSpec = map[string]any{}
		o["spec"] = oldSpec
	}
	overlay(oldSpec, wantSpec)
	if u, ok := old.(*unstructured.Unstructured); ok {
		u.Object = o
		return nil
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(o, old)
}

func overlay(dst, src map[string]any) {
	for k, v := range src {
		sm, srcIsMap := v.(map[string]any)
		dm, dstIsMap := dst[k].(map[string]any)
		if srcIsMap && dstIsMap {
			overlay(dm, sm)
			continue
		}
		dst[k] = v
	}
}

// contains reports whether every value of want is in have.
func contains(have, want map[string]any) bool {
	for k, wv := range want {
		hv, ok := have[k]
		if !ok {
			return false
		}
		wm, wIsMap := wv.(map[string]any)
		hm, hIsMap := hv.(map[string]any)
		switch {
		case wIsMap && hIsMap:
			if !contains(hm, wm) {
				return false
			}
		case !equality.Semantic.DeepEqual(hv, wv):
			return false
		}
	}
	return true
}

// keepConstraints gives want the immutable topology constraints old was
// created with (none, when the API server refused them).
func keepConstraints(old, want client.Object) {
	switch w := want.(type) {
	case *schedulingv1beta1.PodGroup:
		w.Spec.SchedulingConstraints = old.(*schedulingv1beta1.PodGroup).Spec.SchedulingConstraints
	case *schedulingv1beta1.Workload:
		o := old.(*schedulingv1beta1.Workload)
		for i := range w.Spec.PodGroupTemplates {
			if i < len(o.Spec.PodGroupTemplates) {
				w.Spec.PodGroupTemplates[i].SchedulingConstraints = o.Spec.PodGroupTemplates[i].SchedulingConstraints
			}
		}
	}
}
