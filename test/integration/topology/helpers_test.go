package topology

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

const (
	gpu       = framework.GPU
	blockKey  = "muster.dev/block"
	rackKey   = "topology.kubernetes.io/rack"
	hostKey   = corev1.LabelHostname
	pool      = "example.com/pool"
	perNodeGB = "8"
)

// fabric is one test's cluster slice: racks of 8-GPU nodes labelled with
// the test's own pool, a Topology and flavor over them, and a queue.
type fabric struct {
	ns, topology, flavor, lq string
	nodes                    []string
}

// newFabric creates racks × nodesPerRack nodes named <ns>-r<i>-n<j> in
// block <ns>-b1, and a ClusterQueue with the given GPU quota.
func newFabric(t *testing.T, racks, nodesPerRack int, quota string) *fabric {
	t.Helper()
	f := &fabric{ns: env.NewNamespace(t, "topo", nil)}
	f.topology, f.flavor, f.lq = "t-"+f.ns, "f-"+f.ns, "lq"
	for r := 1; r <= racks; r++ {
		for n := 1; n <= nodesPerRack; n++ {
			name := fmt.Sprintf("%s-r%d-n%d", f.ns, r, n)
			createNode(t, MakeNode(name).Label(pool, f.ns).Label(blockKey, f.ns+"-b1").
				Label(rackKey, fmt.Sprintf("%s-r%d", f.ns, r)).Allocatable(gpu, perNodeGB).Allocatable(corev1.ResourceCPU, "32").Obj())
			f.nodes = append(f.nodes, name)
		}
	}
	cq := MakeClusterQueue("cq-" + f.ns).ResourceGroup(MakeFlavorQuotas(f.flavor).Resource(gpu, quota).Obj()).Obj()
	env.CreateAll(t,
		MakeTopology(f.topology, blockKey, rackKey, hostKey),
		MakeResourceFlavor(f.flavor).NodeLabel(pool, f.ns).TopologyName(f.topology).Obj(),
		cq, MakeLocalQueue(f.lq, f.ns).ClusterQueue(cq.Name).Obj())
	return f
}

// createNode creates a node with its status, deleted when the test ends.
func createNode(t *testing.T, n *corev1.Node) { env.CreateNode(t, n) }

// setReady flips a node's Ready condition.
func setReady(t *testing.T, name string, ready bool) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		var n corev1.Node
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &n)).To(Succeed())
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: map[bool]corev1.ConditionStatus{true: corev1.ConditionTrue, false: corev1.ConditionFalse}[ready]}}
		g.Expect(env.Client.Status().Update(context.Background(), &n)).To(Succeed())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// bindPod creates a running pod of nobody's workload on a node, using gpus.
func bindPod(t *testing.T, ns, name, node, gpus string) {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{gpu: resource.MustParse(gpus)},
				Limits: corev1.ResourceList{gpu: resource.MustParse(gpus)}}}}},
	}
	g := NewWithT(t)
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	p.Status.Phase = corev1.PodRunning
	g.Expect(env.Client.Status().Update(ctx, p)).To(Succeed())
}

// job is a Job of pods × perPod GPUs with one pod template annotation.
func (f *fabric) job(name string, pods int32, perPod, annotation, level string) *batchv1.Job {
	return MakeJob(name, f.ns).Queue(f.lq).Parallelism(pods).Request(gpu, perPod).PodAnnotation(annotation, level).Obj()
}

// placement waits for the job's workload to be admitted with a topology
// assignment and returns its pods per node.
func placement(t *testing.T, j *batchv1.Job) map[string]int32 {
	t.Helper()
	var out map[string]int32
	NewWithT(t).Eventually(func(g Gomega) {
		wl := env.WorkloadOfJob(g, j)
		g.Expect(wl.Status.Admission).NotTo(BeNil(), "conditions: %+v", wl.Status.Conditions)
		out = placedPods(g, wl)
	}, framework.Timeout, framework.Interval).Should(Succeed())
	return out
}

func placedPods(g Gomega, wl *musterv1beta1.Workload) map[string]int32 {
	out := map[string]int32{}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		ta := psa.TopologyAssignment
		g.Expect(ta).NotTo(BeNil(), "pod set %s has no topology assignment", psa.Name)
		for _, d := range ta.Domains {
			for i, leaf := range d.Leaves {
				n := ptr.Deref(d.Count, 0)
				if i < len(d.Counts) {
					n = d.Counts[i]
				}
				out[leaf] += n
			}
		}
	}
	return out
}

// racks lists the distinct racks of the nodes (<ns>-r<i>-n<j>).
func racks(nodes map[string]int32) []string {
	var out []string
	for n := range nodes {
		if r := n[:strings.LastIndex(n, "-n")]; !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}

func objectKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

func objectMetaKey(ns, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: ns, Name: name}
}

// eventReasons lists the reasons of the events about an object.
func eventReasons(g Gomega, ns, name string) []string { return env.EventReasons(g, ns, name) }
