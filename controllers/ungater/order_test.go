package ungater

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func indexedPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

// Pods numbered within sub-groups (a JobSet's child Jobs each count from 0)
// are ordered sub-group by sub-group, so each fills its own slice of the
// placement rather than the two interleaving by their equal indexes.
func TestPodsAreOrderedBySubGroupThenIndex(t *testing.T) {
	var pods []*corev1.Pod
	for _, job := range []string{"1", "0"} {
		for _, idx := range []string{"1", "0"} {
			pods = append(pods, indexedPod(fmt.Sprintf("p-%s-%s", job, idx), map[string]string{"job": job, "idx": idx}))
		}
	}
	pods = append(pods, indexedPod("unnumbered", nil))
	sortByIndex(pods, numbering{subGroupLabel: "job", indexLabel: "idx"})
	NewWithT(t).Expect(names(pods)).To(Equal([]string{"p-0-0", "p-0-1", "p-1-0", "p-1-1", "unnumbered"}))

	sortByIndex(pods, numbering{indexLabel: "idx"})
	NewWithT(t).Expect(names(pods)).To(Equal([]string{"p-0-0", "p-1-0", "p-0-1", "p-1-1", "unnumbered"}), "without sub-groups, by index then name")
}

// twoRacks is a placement of 8 pods: nodes a1, a2 in rack a and b1, b2 in
// rack b, two pods each.
func twoRacks() (*slotList, hostMap) {
	s := &slotList{left: map[string]int32{}}
	h := hostMap{byNode: map[string]string{}, byHost: map[string]string{}}
	for _, n := range []string{"a1", "a2", "b1", "b2"} {
		s.nodes = append(s.nodes, n)
		s.left[n] = 2
		s.bySlot = append(s.bySlot, n, n)
		h.byNode[n], h.byHost[n] = n, n
	}
	return s, h
}

func jobSetPod(job, idx int) *corev1.Pod {
	return indexedPod(fmt.Sprintf("p-%d-%d", job, idx), map[string]string{"job": fmt.Sprint(job), "idx": fmt.Sprint(idx)})
}

func nodesOf(plan []ungate) map[string]string {
	out := map[string]string{}
	for _, g := range plan {
		out[g.pod.Name] = g.node
	}
	return out
}

// Two child Jobs of four pods, each a rack's slice: pods that arrive a few
// at a time, mixed across the Jobs, still land each Job's pods in its own
// rack, because a pod takes the slot its number names rather than the
// first free one.
func TestEachSubGroupFillsItsSliceHoweverPodsArrive(t *testing.T) {
	g := NewWithT(t)
	n := numbering{subGroupLabel: "job", indexLabel: "idx", perGroup: 4}
	slots, hosts := twoRacks()

	first := planUngates([]*corev1.Pod{jobSetPod(1, 0), jobSetPod(1, 1), jobSetPod(0, 3)}, n, slots, hosts)
	g.Expect(nodesOf(first)).To(Equal(map[string]string{"p-1-0": "b1", "p-1-1": "b1", "p-0-3": "a2"}))

	second := planUngates([]*corev1.Pod{jobSetPod(0, 0), jobSetPod(0, 1), jobSetPod(0, 2), jobSetPod(1, 2), jobSetPod(1, 3)}, n, slots, hosts)
	g.Expect(nodesOf(second)).To(Equal(map[string]string{"p-0-0": "a1", "p-0-1": "a1", "p-0-2": "a2", "p-1-2": "b2", "p-1-3": "b2"}))
}

// A pod whose slot is gone (its node already holds the pods it owes, say a
// replacement pod was placed there) or that has no number takes the first
// node still owed one; pods beyond the placement stay gated.
func TestPodsWithoutTheirSlotTakeTheFirstFreeOne(t *testing.T) {
	g := NewWithT(t)
	n := numbering{indexLabel: "idx"}
	slots, hosts := twoRacks()
	slots.take("a1")
	slots.take("a1")

	pods := []*corev1.Pod{indexedPod("i0", map[string]string{"idx": "0"}), indexedPod("unnumbered", nil)}
	for i := 2; i < 8; i++ {
		pods = append(pods, indexedPod(fmt.Sprintf("i%d", i), map[string]string{"idx": fmt.Sprint(i)}))
	}
	plan := planUngates(pods, n, slots, hosts)
	g.Expect(plan).To(HaveLen(6), "six slots are left")
	g.Expect(nodesOf(plan)).To(Equal(map[string]string{
		"i2": "a2", "i3": "a2", "i4": "b1", "i5": "b1", "i6": "b2", "i7": "b2",
	}), "numbered pods keep their slots; i0 and the unnumbered pod find none left")
}
