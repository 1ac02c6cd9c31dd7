package builder

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// MakeTopology returns a Topology over node labels, coarsest first.
func MakeTopology(name string, levels ...string) *musterv1beta1.Topology {
	t := &musterv1beta1.Topology{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, l := range levels {
		t.Spec.Levels = append(t.Spec.Levels, musterv1beta1.TopologyLevel{NodeLabel: l})
	}
	return t
}

// TopologyName puts the flavor's nodes in a Topology.
func (b *ResourceFlavorBuilder) TopologyName(name string) *ResourceFlavorBuilder {
	b.rf.Spec.TopologyName = musterv1beta1.TopologyReference(name)
	return b
}

// PodAnnotation sets an annotation of the pod template, such as a
// podset-*-topology one.
func (b *JobBuilder) PodAnnotation(k, v string) *JobBuilder {
	t := &b.job.Spec.Template
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[k] = v
	return b
}

// NodeBuilder builds a Node with its status: Ready, with allocatable
// capacity.
type NodeBuilder struct{ n corev1.Node }

// MakeNode starts a Ready node with 110 pods allocatable, labelled with its
// hostname.
func MakeNode(name string) *NodeBuilder {
	return &NodeBuilder{n: corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")},
			Capacity:    corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}}
}

// Label adds a label.
func (b *NodeBuilder) Label(k, v string) *NodeBuilder {
	b.n.Labels[k] = v
	return b
}

// Allocatable sets an allocatable (and capacity) amount.
func (b *NodeBuilder) Allocatable(name corev1.ResourceName, q string) *NodeBuilder {
	b.n.Status.Allocatable[name] = resource.MustParse(q)
	b.n.Status.Capacity[name] = resource.MustParse(q)
	return b
}

// NotReady sets the Ready condition False.
func (b *NodeBuilder) NotReady() *NodeBuilder {
	b.n.Status.Conditions[0].Status = corev1.ConditionFalse
	return b
}

// Obj returns the Node.
func (b *NodeBuilder) Obj() *corev1.Node { return b.n.DeepCopy() }
