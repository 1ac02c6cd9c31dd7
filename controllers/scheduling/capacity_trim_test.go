package scheduling

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// The cache keeps of most pods only what capacity and the ungater read,
// the index labels among them; a plain Pod that names a queue is a job
// the pod integration updates, so it is kept whole.
func TestTrimPodKeepsWhatItsReadersNeed(t *testing.T) {
	g := NewWithT(t)
	labels := map[string]string{"jobset.sigs.k8s.io/job-index": "1", musterv1beta1.PodSetLabel: "workers", "app": "x"}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}}
	trimmed, err := trimPod(p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(trimmed.(*corev1.Pod).Labels).To(Equal(map[string]string{"jobset.sigs.k8s.io/job-index": "1", musterv1beta1.PodSetLabel: "workers"}))
	g.Expect(trimmed.(*corev1.Pod).Spec.Containers).To(HaveLen(1))

	for _, label := range []string{musterv1beta1.QueueNameLabel, musterv1beta1.KueueQueueNameLabel} {
		queued := p.DeepCopy()
		queued.Labels[label] = "main"
		whole, err := trimPod(queued)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(whole).To(Equal(queued), "a pod with %s is kept whole", label)
	}
}

// TestNodeWithoutHostnameLabelIsKnownByItsName: a node made without the
// kubelet (an autoscaler's kwok node) lacks kubernetes.io/hostname; node
// fit knows it by its name, and the informer's labels are not changed.
func TestNodeWithoutHostnameLabelIsKnownByItsName(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "autoscaled-x1", Labels: map[string]string{"pool": "gpu"}}}
	if got := toNode(n).Labels[corev1.LabelHostname]; got != "autoscaled-x1" {
		t.Errorf("hostname = %q, want the node's name", got)
	}
	if _, ok := n.Labels[corev1.LabelHostname]; ok {
		t.Error("the informer's node was changed")
	}
	n.Labels[corev1.LabelHostname] = "host-1"
	if got := toNode(n).Labels[corev1.LabelHostname]; got != "host-1" {
		t.Errorf("hostname = %q, want the node's own label", got)
	}
}
