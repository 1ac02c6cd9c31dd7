package gang

import (
	"context"
	"reflect"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
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
// same workload to this one: its spec replaced (only counts can differ;
// the immutable fields are the same), its metadata kept.
func (h *HandOff) updateCounts(ctx context.Context, old, want client.Object) error {
	keepConstraints(old, want)
	want.SetResourceVersion(old.GetResourceVersion())
	want.SetFinalizers(old.GetFinalizers())
	want.SetLabels(old.GetLabels())
	want.SetAnnotations(old.GetAnnotations())
	want.SetOwnerReferences(old.GetOwnerReferences())
	return h.client.Update(ctx, want)
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
