package pod

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// A pod group is every Pod of a namespace labelled with one pod-group-name
// that names a queue: one Workload, admitted whole once all
// pod-group-total-count Pods exist. The keys are Kueue's, under its prefix
// or Muster's.
const (
	// GroupNameLabel names the group; it is also its Workload's name.
	GroupNameLabel = "pod-group-name"
	// GroupTotalCountAnnotation is how many Pods the group runs at once.
	GroupTotalCountAnnotation = "pod-group-total-count"
	// RetriableInGroupAnnotation "false" on a Pod ends the group once
	// that Pod fails and no Pod runs, instead of waiting for a replacement.
	RetriableInGroupAnnotation = "retriable-in-group"
	// GroupServingAnnotation "true" marks a group that never finishes (a
	// server): its quota goes only with its Pods.
	GroupServingAnnotation = "pod-group-serving"
	// RoleHashAnnotation is a Pod's shape as the webhook saw it, before
	// admission added its placement: the name of its pod set.
	RoleHashAnnotation = "muster.dev/role-hash"
)

var groupPrefixes = []string{"muster.dev/", musterv1beta1.KueuePrefix}

// groupValue is a group key's value under Muster's prefix, else Kueue's.
func groupValue(m map[string]string, key string) (string, bool) {
	for _, prefix := range groupPrefixes {
		if v, ok := m[prefix+key]; ok {
			return v, true
		}
	}
	return "", false
}

// lwsGroupOf names the pod group of a LeaderWorkerSet's Pod: its group
// (the leader and its workers) after the set and the group's index, as the
// set's own pod webhook labels them; "" for another Pod.
func lwsGroupOf(p *corev1.Pod) string {
	name, index := p.Labels[lwsv1.SetNameLabelKey], p.Labels[lwsv1.GroupIndexLabelKey]
	if name == "" || index == "" {
		return ""
	}
	return "leaderworkerset-" + name + "-" + index
}

// GroupName is the pod group a Pod belongs to; "" for a Pod of its own.
func GroupName(p *corev1.Pod) string {
	if name, ok := groupValue(p.Labels, GroupNameLabel); ok {
		return name
	}
	return lwsGroupOf(p)
}

// sizedBySet reports whether a Pod's group is its LeaderWorkerSet's (no
// group label of the user's), sized by the set's annotation.
func sizedBySet(p *corev1.Pod) bool {
	_, named := groupValue(p.Labels, GroupNameLabel)
	return !named && lwsGroupOf(p) != ""
}

// totalCount is the group size a Pod declares.
func totalCount(p *corev1.Pod) (int32, error) {
	key := groupPrefixes[0] + GroupTotalCountAnnotation
	v, ok := groupValue(p.Annotations, GroupTotalCountAnnotation)
	if sizedBySet(p) {
		key = lwsv1.SizeAnnotationKey
		v, ok = p.Annotations[key]
	}
	if !ok {
		return 0, fmt.Errorf("a Pod of a pod group needs the annotation %s%s: how many Pods the group runs", groupPrefixes[0], GroupTotalCountAnnotation)
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("annotation %s is %q: it must be a positive whole number of Pods", key, v)
	}
	return int32(n), nil
}

func flag(p *corev1.Pod, key, value string) bool {
	v, ok := groupValue(p.Annotations, key)
	return ok && v == value
}

// roleHash is the Pod's pod set: the shape the webhook recorded, or its
// shape now for a Pod that predates the annotation.
func roleHash(p *corev1.Pod) string {
	if h := p.Annotations[RoleHashAnnotation]; h != "" {
		return h
	}
	return shapeHash(p)
}

// shapeHash hashes what decides where a Pod may run and what it takes, and
// nothing else (not its labels, images, commands or environment, as
// Kueue), so the group's identical workers share a pod set.
func shapeHash(p *corev1.Pod) string {
	type container struct {
		Name          string
		Resources     corev1.ResourceRequirements
		RestartPolicy *corev1.ContainerRestartPolicy
	}
	containers := func(cs []corev1.Container) []container {
		out := make([]container, len(cs))
		for i, c := range cs {
			out[i] = container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
		}
		return out
	}
	topology := map[string]string{}
	for k, v := range p.Annotations {
		if strings.Contains(k, "/podset-") {
			topology[k] = v
		}
	}
	s := p.Spec
	b, _ := json.Marshal(struct {
		Init, Main        []container
		NodeSelector      map[string]string
		Affinity          *corev1.Affinity
		Tolerations       []corev1.Toleration
		PriorityClassName string
		RuntimeClassName  *string
		Overhead          corev1.ResourceList
		Spread            []corev1.TopologySpreadConstraint
		Topology          map[string]string
	}{containers(s.InitContainers), containers(s.Containers), s.NodeSelector, s.Affinity, s.Tolerations,
		s.PriorityClassName, s.RuntimeClassName, s.Overhead, s.TopologySpreadConstraints, topology})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:8]
}

func isFinished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// group is the Pods of one pod group, oldest first.
type group struct {
	name string
	pods []corev1.Pod
}

func newGroup(name string, pods []corev1.Pod) *group {
	slices.SortFunc(pods, func(a, b corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return &group{name: name, pods: pods}
}

// total is the group's size, which all its Pods must declare alike.
func (g *group) total() (int32, error) {
	var n int32
	for i := range g.pods {
		m, err := totalCount(&g.pods[i])
		if err != nil {
			return 0, fmt.Errorf("Pod %s: %w", g.pods[i].Name, err)
		}
		if n != 0 && m != n {
			return 0, fmt.Errorf("the Pods of group %s declare different sizes (%s%s %d and %d)", g.name, groupPrefixes[0], GroupTotalCountAnnotation, n, m)
		}
		n = m
	}
	return n, nil
}

// waiting are the Pods at the admission gate that may still run.
func (g *group) waiting() []*corev1.Pod {
	return g.filter(func(p *corev1.Pod) bool {
		return (*Pod)(p).IsSuspended() && !isFinished(p) && p.DeletionTimestamp.IsZero()
	})
}

// running are the Pods past the gate that are not done, terminating ones
// included: they hold their nodes until they are gone.
func (g *group) running() []*corev1.Pod {
	return g.filter(func(p *corev1.Pod) bool { return !(*Pod)(p).IsSuspended() && !isFinished(p) })
}

func (g *group) filter(keep func(*corev1.Pod) bool) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range g.pods {
		if keep(&g.pods[i]) {
			out = append(out, &g.pods[i])
		}
	}
	return out
}

// finished reports whether the group is done, as Kueue says: all its Pods
// succeeded, or one that may not be replaced failed and none runs. A
// failed Pod otherwise waits for its replacement, quota kept.
func (g *group) finished(total int32) (msg string, succeeded, finished bool) {
	if slices.ContainsFunc(g.pods, func(p corev1.Pod) bool { return flag(&p, GroupServingAnnotation, "true") }) {
		return "", false, false
	}
	var done int32
	for i := range g.pods {
		if g.pods[i].Status.Phase == corev1.PodSucceeded {
			done++
		}
	}
	msg = fmt.Sprintf("Pods succeeded: %d/%d", done, total)
	switch {
	case done >= total:
		return msg, true, true
	case g.unretriableFailed() && len(g.running()) == 0:
		return msg + "; a Pod that may not be replaced (" + groupPrefixes[0] + RetriableInGroupAnnotation + ": false) failed", false, true
	}
	return "", false, false
}

// unretriableFailed reports whether a Pod that may not be replaced failed:
// the group then starts no other Pod.
func (g *group) unretriableFailed() bool {
	return slices.ContainsFunc(g.pods, func(p corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed && flag(&p, RetriableInGroupAnnotation, "false")
	})
}

// fits reports whether every waiting Pod has a pod set of the Workload:
// a group whose Pods were replaced with another shape (a rolling update)
// does not, and needs a Workload of its new shape.
func fits(pods []*corev1.Pod, wl *musterv1beta1.Workload) bool {
	for _, p := range pods {
		if !slices.ContainsFunc(wl.Spec.PodSets, func(ps musterv1beta1.PodSet) bool { return ps.Name == roleHash(p) }) {
			return false
		}
	}
	return true
}

// podSets are the pod sets of the group's Pods: one per shape, named by
// its hash as Kueue names them, in the order of their hashes.
func podSets(pods []*corev1.Pod) []musterv1beta1.PodSet {
	byShape := map[string]*musterv1beta1.PodSet{}
	var names []string
	for _, p := range pods {
		h := roleHash(p)
		if ps, ok := byShape[h]; ok {
			ps.Count++
			continue
		}
		byShape[h] = &musterv1beta1.PodSet{Name: h, Count: 1, Template: *(*Pod)(p).template()}
		names = append(names, h)
	}
	slices.Sort(names)
	out := make([]musterv1beta1.PodSet, 0, len(names))
	for _, n := range names {
		ps := byShape[n]
		stripGroupMarks(&ps.Template)
		out = append(out, *ps)
	}
	return out
}

// stripGroupMarks leaves out of a pod set's template what belongs to one
// Pod: the admission gate and the role hash.
func stripGroupMarks(t *corev1.PodTemplateSpec) {
	t.Spec.SchedulingGates = slices.DeleteFunc(t.Spec.SchedulingGates, isAdmissionGate)
	if len(t.Spec.SchedulingGates) == 0 {
		t.Spec.SchedulingGates = nil
	}
	delete(t.Annotations, RoleHashAnnotation)
}
