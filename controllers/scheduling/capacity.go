package scheduling

import (
	"context"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/podrequests"
)

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch

// CacheByObject trims the Nodes and Pods the manager caches to what node
// capacity and the topology ungater read, so that the informers of a
// 10,000-node, 100,000-pod cluster stay small: no managed fields, images,
// volumes, env, probes or status beyond phase and readiness.
func CacheByObject() map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{
		&corev1.Node{}: {Transform: trimNode},
		&corev1.Pod{}:  {Transform: trimPod},
	}
}

func trimNode(o any) (any, error) {
	n, ok := o.(*corev1.Node)
	if !ok {
		return o, nil
	}
	out := &corev1.Node{
		ObjectMeta: trimMeta(n.ObjectMeta),
		Spec:       corev1.NodeSpec{Unschedulable: n.Spec.Unschedulable, Taints: n.Spec.Taints},
		Status:     corev1.NodeStatus{Allocatable: n.Status.Allocatable},
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime}}
		}
	}
	return out, nil
}

func trimPod(o any) (any, error) {
	p, ok := o.(*corev1.Pod)
	if !ok || namesQueue(p) {
		// A plain Pod that names a queue is a job of its own: the pod
		// integration reads and writes it whole.
		return o, nil
	}
	out := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			DeletionTimestamp: p.DeletionTimestamp, Labels: keep(p.Labels, isPodLabelKept), Annotations: keep(p.Annotations, isPodAnnotationKept)},
		Spec: corev1.PodSpec{
			NodeName:        p.Spec.NodeName,
			NodeSelector:    p.Spec.NodeSelector,
			SchedulingGates: p.Spec.SchedulingGates,
			// One container holding what the pod takes of its node (init
			// containers, sidecars and overhead folded in): that is all
			// capacity reads, and a fraction of a pod's containers.
			Containers: []corev1.Container{{Name: "requests", Resources: corev1.ResourceRequirements{
				Requests: podrequests.PerPod(&p.Spec, nil, p.Spec.Overhead)}}},
		},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}
	return out, nil
}

// namesQueue reports whether a pod carries a queue label.
func namesQueue(p *corev1.Pod) bool {
	_, muster := p.Labels[musterv1beta1.QueueNameLabel]
	_, kueue := p.Labels[musterv1beta1.KueueQueueNameLabel]
	return muster || kueue
}

// isPodLabelKept keeps the labels the ungater reads: the pod set, and the
// index labels of the kinds that have one (a JobSet's child Job index
// among them, by which its pods are grouped into slices).
func isPodLabelKept(k string) bool {
	switch k {
	case musterv1beta1.PodSetLabel, "batch.kubernetes.io/job-completion-index", "training.kubeflow.org/replica-index", "jobset.sigs.k8s.io/job-index":
		return true
	}
	return false
}

// isPodAnnotationKept keeps Muster's annotations and the Job completion
// index, also an annotation.
func isPodAnnotationKept(k string) bool {
	return strings.HasPrefix(k, "muster.dev/") || k == "batch.kubernetes.io/job-completion-index"
}

// keep returns the entries of m whose key passes, nil when none does.
func keep(m map[string]string, pass func(string) bool) map[string]string {
	var out map[string]string
	for k, v := range m {
		if pass(k) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// trimMeta keeps a node's identity and labels.
func trimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion, Labels: m.Labels}
}

// toNode is the core's view of a Node.
func toNode(n *corev1.Node) *core.Node {
	out := &core.Node{Name: n.Name, Labels: nodeLabels(n), Unschedulable: n.Spec.Unschedulable, Allocatable: core.Requests{}}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Ready = c.Status == corev1.ConditionTrue
			if !out.Ready {
				out.NotReadySince = c.LastTransitionTime.Time
			}
		}
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			out.Taints = append(out.Taints, core.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
		}
	}
	for name, q := range n.Status.Allocatable {
		if name == corev1.ResourcePods {
			out.Pods = q.Value()
			continue
		}
		out.Allocatable[string(name)] = core.Amount(string(name), q)
	}
	return out
}

// nodeLabels are a node's labels, with kubernetes.io/hostname its name
// when it has none: the kubelet sets it, but a node made by other means
// (an autoscaler's kwok node) may lack it, and node fit knows nodes by it.
// Such a node can be counted, not pinned to: a Topology or node fit Pin
// sends pods by a hostname node selector, which it cannot match.
func nodeLabels(n *corev1.Node) map[string]string {
	if _, ok := n.Labels[corev1.LabelHostname]; ok {
		return n.Labels
	}
	labels := maps.Clone(n.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[corev1.LabelHostname] = n.Name
	return labels
}

// toPod is the core's view of a bound, running Pod; nil when it holds no
// capacity (not bound yet, or terminated).
func toPod(p *corev1.Pod) *core.Pod {
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	out := &core.Pod{Node: p.Spec.NodeName, Requests: core.Requests{}, Terminating: p.DeletionTimestamp != nil}
	if name := p.Annotations[musterv1beta1.WorkloadAnnotation]; name != "" {
		out.Workload, out.PodSet = p.Namespace+"/"+name, p.Labels[musterv1beta1.PodSetLabel]
	}
	for name, q := range podrequests.PerPod(&p.Spec, nil, p.Spec.Overhead) {
		if name != corev1.ResourcePods {
			out.Requests[string(name)] = core.Amount(string(name), q)
		}
	}
	return out
}

// capacityFeed keeps the core's node capacity in line with Nodes and Pods,
// and gives the queues waiting on topology flavors another chance when
// capacity frees.
type capacityFeed struct {
	state *State
}

// register adds the feed's handlers to the manager's Node and Pod informers.
func (f *capacityFeed) register(ctx context.Context, c cache.Cache) error {
	nodes, err := c.GetInformer(ctx, &corev1.Node{})
	if err != nil {
		return err
	}
	if _, err := nodes.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { f.setNode(o) },
		UpdateFunc: func(_, o any) { f.setNode(o) },
		DeleteFunc: f.deleteNode,
	}); err != nil {
		return err
	}
	pods, err := c.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	_, err = pods.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { f.setPod(o) },
		UpdateFunc: func(_, o any) { f.setPod(o) },
		DeleteFunc: f.deletePod,
	})
	return err
}

func (f *capacityFeed) setNode(o any) {
	if n, ok := o.(*corev1.Node); ok {
		f.state.applyNode(n)
	}
}

func (f *capacityFeed) deleteNode(o any) {
	if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	if n, ok := o.(*corev1.Node); ok {
		f.state.Cache.DeleteNode(n.Name)
		f.state.Queues.Notify() // its placements need repair
	}
}

func (f *capacityFeed) setPod(o any) {
	if p, ok := o.(*corev1.Pod); ok {
		f.state.applyPod(p)
	}
}

func (f *capacityFeed) deletePod(o any) {
	if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	if p, ok := o.(*corev1.Pod); ok {
		f.state.Cache.DeletePod(p.Namespace + "/" + p.Name)
		f.state.capacityFreed()
	}
}

// applyNode records a node; one that may take more pods now wakes the
// topology queues, and one that failed wakes the scheduler to repair.
func (s *State) applyNode(n *corev1.Node) {
	if s.Cache.SetNode(toNode(n)) {
		s.capacityFreed()
		s.Queues.Notify()
	}
}

// applyPod records a pod's usage, or drops it once it ended.
func (s *State) applyPod(p *corev1.Pod) {
	key := p.Namespace + "/" + p.Name
	cp := toPod(p)
	if cp == nil {
		if s.Cache.DeletePod(key) {
			s.capacityFreed()
		}
		return
	}
	s.Cache.SetPod(key, cp)
}

// capacityFreed gives the queues with topology flavors another chance.
func (s *State) capacityFreed() {
	if qs := s.Cache.TopologyQueues(); len(qs) > 0 {
		s.Queues.Unpark(qs...)
	}
}
