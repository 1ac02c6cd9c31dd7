package pod

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// member is a Pod of group "g" of total Pods asking gpus GPUs.
func member(name string, total, gpus string, phase corev1.PodPhase) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels:      map[string]string{"muster.dev/pod-group-name": "g", "app": name},
			Annotations: map[string]string{"muster.dev/pod-group-total-count": total}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img:" + name,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}}}}},
		Status: corev1.PodStatus{Phase: phase},
	}
	(*Pod)(&p).Suspend()
	(*Pod)(&p).Default()
	if phase != corev1.PodPending {
		p.Spec.SchedulingGates = nil // it ran
	}
	return p
}

// A Pod's shape is what it takes and where it may go: the same for
// workers that differ in labels and images, different for another request
// or node selector; recorded when gated, so the placement added on
// admission does not change it.
func TestPodsOfOneShapeShareAPodSet(t *testing.T) {
	g := NewWithT(t)
	a, b, c := member("a", "3", "2", corev1.PodPending), member("b", "3", "2", corev1.PodPending), member("c", "3", "1", corev1.PodPending)
	g.Expect(roleHash(&a)).To(Equal(roleHash(&b)), "labels and images do not make a shape")
	g.Expect(roleHash(&a)).NotTo(Equal(roleHash(&c)))
	pinned := member("p", "3", "2", corev1.PodPending)
	pinned.Spec.NodeSelector = map[string]string{"pool": "h100"}
	g.Expect(shapeHash(&pinned)).NotTo(Equal(shapeHash(&a)))

	recorded := roleHash(&a)
	a.Spec.NodeSelector = map[string]string{"pool": "from-the-flavor"}
	g.Expect(roleHash(&a)).To(Equal(recorded))

	sets := podSets([]*corev1.Pod{&a, &b, &c})
	g.Expect(sets).To(HaveLen(2))
	for _, ps := range sets {
		g.Expect(ps.Template.Spec.SchedulingGates).To(BeEmpty(), "the gate is the Pod's, not the pod set's")
		g.Expect(ps.Template.Annotations).NotTo(HaveKey(RoleHashAnnotation))
		want := int32(1)
		if ps.Name == recorded {
			want = 2
		}
		g.Expect(ps.Count).To(Equal(want))
	}
}

// Kueue's termination rules: all Pods succeeded, or a Pod that may not
// be replaced failed and none runs; a serving group never finishes.
func TestWhenAPodGroupIsFinished(t *testing.T) {
	unretriable := func(p corev1.Pod) corev1.Pod {
		p.Annotations["kueue.x-k8s.io/retriable-in-group"] = "false"
		return p
	}
	serving := func(p corev1.Pod) corev1.Pod {
		p.Annotations["muster.dev/pod-group-serving"] = "true"
		return p
	}
	cases := map[string]struct {
		pods                []corev1.Pod
		finished, succeeded bool
	}{
		"all succeeded": {pods: []corev1.Pod{member("a", "2", "1", corev1.PodSucceeded), member("b", "2", "1", corev1.PodSucceeded)},
			finished: true, succeeded: true},
		"one still runs":                         {pods: []corev1.Pod{member("a", "2", "1", corev1.PodSucceeded), member("b", "2", "1", corev1.PodRunning)}},
		"a failed Pod waits for its replacement": {pods: []corev1.Pod{member("a", "2", "1", corev1.PodSucceeded), member("b", "2", "1", corev1.PodFailed)}},
		"a replacement's success completes it": {pods: []corev1.Pod{member("a", "2", "1", corev1.PodSucceeded),
			member("b", "2", "1", corev1.PodFailed), member("b2", "2", "1", corev1.PodSucceeded)}, finished: true, succeeded: true},
		"an unretriable failure, none running": {pods: []corev1.Pod{unretriable(member("a", "2", "1", corev1.PodFailed)),
			member("b", "2", "1", corev1.PodPending)}, finished: true},
		"an unretriable failure, one running": {pods: []corev1.Pod{unretriable(member("a", "2", "1", corev1.PodFailed)),
			member("b", "2", "1", corev1.PodRunning)}},
		"serving": {pods: []corev1.Pod{serving(member("a", "1", "1", corev1.PodSucceeded))}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			msg, succeeded, finished := newGroup("g", tc.pods).finished(2)
			g.Expect(finished).To(Equal(tc.finished))
			g.Expect(succeeded).To(Equal(tc.succeeded))
			if finished {
				g.Expect(msg).To(ContainSubstring("Pods succeeded"))
			}
		})
	}
}

// The group's size is every Pod's to declare, alike; a Pod's own
// declaration is checked when it is created.
func TestAPodGroupsSize(t *testing.T) {
	g := NewWithT(t)
	n, err := newGroup("g", []corev1.Pod{member("a", "2", "1", corev1.PodPending), member("b", "2", "1", corev1.PodPending)}).total()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(int32(2)))
	_, err = newGroup("g", []corev1.Pod{member("a", "2", "1", corev1.PodPending), member("b", "3", "1", corev1.PodPending)}).total()
	g.Expect(err).To(MatchError(ContainSubstring("different sizes")))

	for total, want := range map[string]string{"": "needs the annotation", "0": "positive", "two": "positive"} {
		p := member("a", total, "1", corev1.PodPending)
		if total == "" {
			delete(p.Annotations, "muster.dev/pod-group-total-count")
		}
		errs := (*Pod)(&p).ValidateQueued()
		g.Expect(errs).To(HaveLen(1))
		g.Expect(errs[0].Error()).To(ContainSubstring(want))
	}
	p := member("a", "2", "1", corev1.PodPending)
	p.Labels["kueue.x-k8s.io/pod-group-name"] = "Bad_Name"
	delete(p.Labels, "muster.dev/pod-group-name")
	g.Expect((*Pod)(&p).ValidateQueued()).To(ContainElement(HaveField("Detail", ContainSubstring("names the group's Workload"))))
	good := member("a", "2", "1", corev1.PodPending)
	g.Expect((*Pod)(&good).ValidateQueued()).To(BeEmpty())
}

// The group lists its Pods oldest first, so the first Pods made are the
// ones admitted and a later one is the excess.
func TestAPodGroupIsOldestFirst(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	late, early := member("late", "1", "1", corev1.PodPending), member("early", "1", "1", corev1.PodPending)
	late.CreationTimestamp = metav1.NewTime(now)
	early.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute))
	waiting := newGroup("g", []corev1.Pod{late, early}).waiting()
	g.Expect(waiting[0].Name).To(Equal("early"))
}

// A LeaderWorkerSet's Pods are grouped by its own labels: the set's name
// and the group index name the group, its size annotation sizes it; a
// group label of the user's wins.
func TestALeaderWorkerSetGroupIsAPodGroup(t *testing.T) {
	g := NewWithT(t)
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Labels:      map[string]string{"leaderworkerset.sigs.k8s.io/name": "serve", "leaderworkerset.sigs.k8s.io/group-index": "1"},
		Annotations: map[string]string{"leaderworkerset.sigs.k8s.io/size": "4"}}}
	g.Expect(GroupName(&p)).To(Equal("leaderworkerset-serve-1"))
	n, err := totalCount(&p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(int32(4)))
	g.Expect((*Pod)(&p).ValidateQueued()).To(BeEmpty())

	delete(p.Labels, "leaderworkerset.sigs.k8s.io/group-index")
	g.Expect(GroupName(&p)).To(BeEmpty(), "a leader before the set's webhook named its group")
	p.Labels["muster.dev/pod-group-name"] = "mine"
	g.Expect(GroupName(&p)).To(Equal("mine"))
}
