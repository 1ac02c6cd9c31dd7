package gang

import (
	"context"
	"reflect"

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

func metav1IsOwnedBy(obj client.Object, wl *musterv1beta1.Workload) bool {
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
	want.SetResourceVersion(old.GetResourceVersion())
	want.SetFinalizers(old.GetFinalizers())
	want.SetLabels(old.GetLabels())
	want.SetAnnotations(old.GetAnnotations())
	want.SetOwnerReferences(old.GetOwnerReferences())
	return h.client.Update(ctx, want)
}
