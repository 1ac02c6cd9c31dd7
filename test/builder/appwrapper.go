package builder

import (
	"encoding/json"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// AppWrapperBuilder builds a CodeFlare AppWrapper (workload.codeflare.dev/v1beta2).
type AppWrapperBuilder struct{ aw awv1beta2.AppWrapper }

// MakeAppWrapper is an AppWrapper of no component.
func MakeAppWrapper(name, namespace string) *AppWrapperBuilder {
	return &AppWrapperBuilder{aw: awv1beta2.AppWrapper{
		TypeMeta:   metav1.TypeMeta{APIVersion: awv1beta2.GroupVersion.String(), Kind: "AppWrapper"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}}
}

// Queue labels the AppWrapper with Kueue's queue label, as a Kueue user
// writes it.
func (b *AppWrapperBuilder) Queue(name string) *AppWrapperBuilder {
	b.aw.Labels = map[string]string{musterv1beta1.KueueQueueNameLabel: name}
	return b
}

// Component wraps obj (its apiVersion and kind set), with the pod sets
// declared, or none for the AppWrapper library to infer.
func (b *AppWrapperBuilder) Component(obj runtime.Object, podSets ...awv1beta2.AppWrapperPodSet) *AppWrapperBuilder {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		gvk, err := apiutil.GVKForObject(obj, scheme.Scheme)
		if err != nil {
			panic(err)
		}
		obj = obj.DeepCopyObject()
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	b.aw.Spec.Components = append(b.aw.Spec.Components, awv1beta2.AppWrapperComponent{
		DeclaredPodSets: podSets, Template: runtime.RawExtension{Raw: raw}})
	return b
}

// Obj returns the AppWrapper.
func (b *AppWrapperBuilder) Obj() *awv1beta2.AppWrapper { return b.aw.DeepCopy() }
