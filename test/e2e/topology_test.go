//go:build e2e

package e2e

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

// The topology tests run on the cluster's topology pool (hack/cluster.sh
// with TOPOLOGY=2x2x4, as make test-e2e brings it up): 2 blocks x 2 racks x
// 4 nodes of 8 GPUs, tainted muster.dev/pool=topology:NoSchedule so the
// other tests never see them. Each test has its own Topology (block, rack,
// hostname) and a flavor over the pool that tolerates the taint, and starts
// only once the pool is Ready and empty, so placements are exact.
//
// Admission is checked the way the design enforces it: the Workload's
// topologyAssignment names nodes and pod counts, each pod is released from
// its muster.dev/topology scheduling gate with a kubernetes.io/hostname
// nodeSelector, and kube-scheduler binds it there (kwok runs it).

const (
	poolLabel  = "muster.dev/pool"
	poolValue  = "topology"
	blockLabel = "muster.dev/block"
	rackLabel  = "topology.kubernetes.io/rack"
	hostLabel  = corev1.LabelHostname

	poolBlocks, poolRacksPerBlock, poolNodesPerRack, poolGPUsPerNode = 2, 2, 4, 8

	annRequired  = musterv1beta1.PodSetRequiredTopologyAnnotation
	annPreferred = musterv1beta1.PodSetPreferredTopologyAnnotation
	annGroup     = musterv1beta1.PodSetGroupNameAnnotation

	// NotReady handling may wait a while before it acts on a node (Kueue
	// waits 30 s), and then the job's pods are recreated.
	nodeFailureTimeout = 4 * time.Minute
)

// TestTopologyRequiredRackRunsInOneRack: a 32-GPU Job (4 pods x 8 GPUs)
// that requires a rack is admitted into one rack, and its pods run on the
// nodes of its topologyAssignment.
func TestTopologyRequiredRackRunsInOneRack(t *testing.T) {
	g := NewWithT(t)
	p := topologyPool(t)
	ns := namespace(t)
	topologyQueue(t, ns, "128", nil)
	j := topologyJob(ns, "rack", 4, "8", map[string]string{annRequired: rackLabel})
	createAll(t, j)

	g.Eventually(func(g Gomega) {
		nodes := placedAsAssigned(g, ns, "Job", j.Name, map[string]string{"job-name": j.Name}, 4)
		g.Expect(p.racksOf(nodes)).To(HaveLen(1), "pods on %v", nodes)
	}, timeout, time.Second).Should(Succeed())
}

// TestTopologyPreferredRackSpillsToFewestRacks: 6 pods x 8 GPUs prefer a
// rack but a rack holds 4 such pods; they spill over the fewest racks (2),
// in one block.
func TestTopologyPreferredRackSpillsToFewestRacks(t *testing.T) {
	g := NewWithT(t)
	p := topologyPool(t)
	ns := namespace(t)
	topologyQueue(t, ns, "128", nil)
	j := topologyJob(ns, "spill", 6, "8", map[string]string{annPreferred: rackLabel})
	createAll(t, j)

	g.Eventually(func(g Gomega) {
		nodes := placedAsAssigned(g, ns, "Job", j.Name, map[string]string{"job-name": j.Name}, 6)
		g.Expect(p.racksOf(nodes)).To(HaveLen(2), "pods on %v", nodes)
		g.Expect(p.blocksOf(nodes)).To(HaveLen(1), "pods on %v", nodes)
	}, timeout, time.Second).Should(Succeed())
}

// TestTopologyPyTorchJobGroupInOneRack: a PyTorchJob whose Master and
// Worker templates name one podset-group-name (and require a rack) has
// all its pods in one rack. A filler leaves one rack with exactly 8 free
// GPUs: the Master alone would fit there best, so placed apart the two
// sets would be split over two racks.
func TestTopologyPyTorchJobGroupInOneRack(t *testing.T) {
	g := NewWithT(t)
	p := topologyPool(t)
	ns := namespace(t)
	topologyQueue(t, ns, "128", nil)
	filler := topologyJob(ns, "filler", 3, "8", map[string]string{annRequired: rackLabel})
	createAll(t, filler)
	var fillerRack string
	g.Eventually(func(g Gomega) {
		nodes := placedAsAssigned(g, ns, "Job", filler.Name, map[string]string{"job-name": filler.Name}, 3)
		racks := p.racksOf(nodes)
		g.Expect(racks).To(HaveLen(1))
		fillerRack = racks[0]
	}, timeout, time.Second).Should(Succeed())

	ann := map[string]string{annRequired: rackLabel, annGroup: "trainer"}
	pt := MakePyTorchJob("pt", ns).Queue("main").
		Request(kftraining.PyTorchJobReplicaTypeMaster, gpu, "8").Request(kftraining.PyTorchJobReplicaTypeMaster, "cpu", "1").
		Replicas(kftraining.PyTorchJobReplicaTypeWorker, 3).
		Request(kftraining.PyTorchJobReplicaTypeWorker, gpu, "8").Request(kftraining.PyTorchJobReplicaTypeWorker, "cpu", "1").Obj()
	for _, rs := range pt.Spec.PyTorchReplicaSpecs {
		rs.Template.Annotations = ann
	}
	createAll(t, pt)

	g.Eventually(func(g Gomega) {
		nodes := placedAsAssigned(g, ns, "PyTorchJob", pt.Name, map[string]string{"training.kubeflow.org/job-name": pt.Name}, 4)
		racks := p.racksOf(nodes)
		g.Expect(racks).To(HaveLen(1), "master and workers on %v", nodes)
		g.Expect(racks[0]).NotTo(Equal(fillerRack), "the filler's rack has 8 GPUs free, not 32")
	}, timeout, time.Second).Should(Succeed())
}

// TestTopologyFragmentedGPUsDoNotAdmit: the flavor covers one rack (32
// GPUs); other jobs leave 4 GPUs free, but only as 2 + 2 on two nodes. A
// 1-pod x 4-GPU Job that requires a host has the quota but no host: it
// waits, saying so, and creates no pod. Once a host frees it runs there.
func TestTopologyFragmentedGPUsDoNotAdmit(t *testing.T) {
	g := NewWithT(t)
	p := topologyPool(t)
	ns := namespace(t)
	rack := p.rackNames()[len(p.racks)-1]
	topologyQueue(t, ns, "32", map[string]string{rackLabel: rack})

	// Two whole nodes, then 6 of 8 GPUs on each of the other two: however
	// they are placed, the rack's 4 free GPUs are 2 + 2.
	var fillNodes []string
	for _, f := range []struct{ name, gpus string }{{"full-a", "8"}, {"full-b", "8"}, {"six-a", "6"}, {"six-b", "6"}} {
		j := topologyJob(ns, f.name, 1, f.gpus, nil)
		createAll(t, j)
		var node string
		g.Eventually(func(g Gomega) {
			nodes := placedAsAssigned(g, ns, "Job", j.Name, map[string]string{"job-name": j.Name}, 1)
			g.Expect(p.rackOf[nodes[0]]).To(Equal(rack))
			node = nodes[0]
		}, timeout, time.Second).Should(Succeed())
		fillNodes = append(fillNodes, node)
	}
	g.Expect(fillNodes).To(HaveLen(4))
	g.Expect(sets(fillNodes)).To(HaveLen(4), "one filler per node: %v", fillNodes)

	big := topologyJob(ns, "big", 1, "4", map[string]string{annRequired: hostLabel})
	createAll(t, big)
	g.Eventually(func(g Gomega) {
		// The pending reason names the topology level it could not fit in.
		waitsSaying(g, ns, big.Name, hostLabel)
	}, timeout, time.Second).Should(Succeed())
	wl := workloadOf(g, ns, "Job", big.Name)
	t.Logf("%s waits: %s", wl.Name, meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved).Message)
	bound, pending, _, _ := podsOf(g, ns, big.Name)
	g.Expect(bound+pending).To(BeZero(), "the waiting job created no pods")
	var j batchv1.Job
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(big), &j)).To(Succeed())
	g.Expect(ptr.Deref(j.Spec.Suspend, false)).To(BeTrue(), "the waiting job stays suspended")

	// A whole node frees: the job is admitted onto it.
	g.Expect(c.Delete(context.Background(), &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "full-a"}},
		client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	g.Eventually(func(g Gomega) {
		nodes := placedAsAssigned(g, ns, "Job", big.Name, map[string]string{"job-name": big.Name}, 1)
		g.Expect(nodes).To(Equal([]string{fillNodes[0]}), "the only host with 4 free GPUs")
	}, timeout, time.Second).Should(Succeed())
}

// TestTopologyNodeNotReady: one node of an admitted placement goes
// NotReady (its Ready condition patched False: kwok, which only sets nodes
// Ready while they are not Running, leaves it so) and stays so past the
// grace period. What Muster does depends on what the job tolerates: a Job
// with backoffLimit 6 loses one pod it can absorb, so the placement is
// repaired inside the rack (NodeReplaced); with backoffLimit 0 the lost pod
// would fail the Job, so it is evicted (NodeFailures), suspended (its pods
// not counted as failures) and admitted again whole. Either way the new
// placement avoids the node, an event on the workload names it, the pods
// run on the new placement, and the Job has not failed.
func TestTopologyNodeNotReady(t *testing.T) {
	for name, tc := range map[string]struct {
		backoffLimit int32
		event        string
	}{
		"tolerated: repaired":     {6, musterv1beta1.ReasonNodeReplaced},
		"not tolerated: requeued": {0, musterv1beta1.ReasonNodeFailures},
	} {
		t.Run(name, func(t *testing.T) { nodeNotReady(t, tc.backoffLimit, tc.event) })
	}
}

func nodeNotReady(t *testing.T, backoffLimit int32, wantEvent string) {
	g := NewWithT(t)
	p := topologyPool(t)
	ns := namespace(t)
	topologyQueue(t, ns, "128", nil)
	j := topologyJob(ns, "survivor", 2, "8", map[string]string{annRequired: rackLabel})
	j.Spec.BackoffLimit = ptr.To(backoffLimit)
	createAll(t, j)
	labels := map[string]string{"job-name": j.Name}
	var before []string
	g.Eventually(func(g Gomega) {
		before = placedAsAssigned(g, ns, "Job", j.Name, labels, 2)
	}, timeout, time.Second).Should(Succeed())
	rack, failed := p.rackOf[before[0]], before[0]
	wl := workloadOf(g, ns, "Job", j.Name)

	setNodeReady(t, failed, false)
	t.Cleanup(func() { setNodeReady(t, failed, true) })

	g.Eventually(func(g Gomega) []string {
		var events corev1.EventList
		g.Expect(c.List(context.Background(), &events, client.InNamespace(ns))).To(Succeed())
		var out []string
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "Workload" && e.InvolvedObject.Name == wl.Name && strings.Contains(e.Message, failed) {
				out = append(out, e.Reason)
			}
		}
		return out
	}, nodeFailureTimeout, time.Second).Should(ContainElement(wantEvent), "a %s event on workload %s names node %s", wantEvent, wl.Name, failed)
	g.Eventually(func(g Gomega) {
		wl := workloadOf(g, ns, "Job", j.Name)
		g.Expect(wl.Status.Admission).NotTo(BeNil(), "admitted")
		assigned := assignedNodes(g, wl)
		g.Expect(assigned).NotTo(HaveKey(failed))
		g.Expect(p.racksOf(keys(assigned))).To(HaveLen(1), "still one rack: %v", assigned)
	}, nodeFailureTimeout, time.Second).Should(Succeed())
	t.Logf("node %s of rack %s failed: %s; now on %v", failed, rack, wantEvent, assignedNodes(g, workloadOf(g, ns, "Job", j.Name)))

	// The pods follow. A requeued Job's pods are deleted by its suspension;
	// a repaired one's pod on the failed node is left to the node lifecycle
	// controller, which is off in this cluster: do its part.
	g.Eventually(func(g Gomega) {
		var pods corev1.PodList
		g.Expect(c.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
		for i := range pods.Items {
			if wantEvent == musterv1beta1.ReasonNodeReplaced && pods.Items[i].Spec.NodeName == failed && pods.Items[i].DeletionTimestamp == nil {
				g.Expect(client.IgnoreNotFound(c.Delete(context.Background(), &pods.Items[i]))).To(Succeed())
			}
		}
		nodes := placedAsAssigned(g, ns, "Job", j.Name, labels, 2)
		g.Expect(nodes).NotTo(ContainElement(failed))
	}, nodeFailureTimeout, time.Second).Should(Succeed())
	var cur batchv1.Job
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(j), &cur)).To(Succeed())
	for _, cond := range cur.Status.Conditions {
		g.Expect(cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue).To(BeFalse(), "the Job failed: %s", cond.Message)
	}
}

// TestTopologyPinnedToOneHostIsRequeuedWhole: 8 one-GPU pods required on
// one host are pinned there by the Job's template. When the host fails the
// placement is not moved (the replacement pods would wait for the dead
// node, and fail the Job as they are lost): the Job is requeued whole and
// runs on another host.
func TestTopologyPinnedToOneHostIsRequeuedWhole(t *testing.T) {
	g := NewWithT(t)
	topologyPool(t)
	ns := namespace(t)
	topologyQueue(t, ns, "128", nil)
	j := topologyJob(ns, "host", 8, "1", map[string]string{annRequired: hostLabel})
	j.Spec.BackoffLimit = ptr.To[int32](6)
	createAll(t, j)
	labels := map[string]string{"job-name": j.Name}
	var failed string
	g.Eventually(func(g Gomega) {
		nodes := placedAsAssigned(g, ns, "Job", j.Name, labels, 8)
		g.Expect(sets(nodes)).To(HaveLen(1))
		failed = nodes[0]
	}, timeout, time.Second).Should(Succeed())
	setNodeReady(t, failed, false)
	t.Cleanup(func() { setNodeReady(t, failed, true) })
	g.Eventually(func(g Gomega) {
		nodes := placedAsAssigned(g, ns, "Job", j.Name, labels, 8)
		g.Expect(sets(nodes)).To(HaveLen(1))
		g.Expect(nodes[0]).NotTo(Equal(failed))
	}, nodeFailureTimeout, time.Second).Should(Succeed())
	var cur batchv1.Job
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(j), &cur)).To(Succeed())
	g.Expect(cur.Status.Failed).To(BeNumerically("<=", 6), "the lost pods did not fail the Job")
	for _, cond := range cur.Status.Conditions {
		g.Expect(cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue).To(BeFalse(), "the Job failed: %s", cond.Message)
	}
}

// TestTopologyNodeNotReadyWithoutRoomEvicts: a Job fills a whole rack
// (required) and one of its nodes goes NotReady. The rack has no other
// node for that pod, so the workload is evicted (NodeFailures, an event
// naming the node), requeued, and admitted whole into another rack.
func TestTopologyNodeNotReadyWithoutRoomEvicts(t *testing.T) {
	g := NewWithT(t)
	p := topologyPool(t)
	ns := namespace(t)
	topologyQueue(t, ns, "128", nil)
	j := topologyJob(ns, "full-rack", 4, "8", map[string]string{annRequired: rackLabel})
	createAll(t, j)
	labels := map[string]string{"job-name": j.Name}
	var before []string
	g.Eventually(func(g Gomega) {
		before = placedAsAssigned(g, ns, "Job", j.Name, labels, 4)
	}, timeout, time.Second).Should(Succeed())
	rack, failed := p.rackOf[before[0]], before[0]
	wl := workloadOf(g, ns, "Job", j.Name)

	setNodeReady(t, failed, false)
	t.Cleanup(func() { setNodeReady(t, failed, true) })

	var evicted []string
	g.Eventually(func(g Gomega) []string {
		var events corev1.EventList
		g.Expect(c.List(context.Background(), &events, client.InNamespace(ns))).To(Succeed())
		evicted = nil
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "Workload" && e.InvolvedObject.Name == wl.Name &&
				e.Reason == musterv1beta1.ReasonNodeFailures && strings.Contains(e.Message, failed) {
				evicted = append(evicted, e.Message)
			}
		}
		return evicted
	}, nodeFailureTimeout, time.Second).ShouldNot(BeEmpty(), "an eviction event on workload %s names node %s", wl.Name, failed)
	t.Logf("%s: %s", musterv1beta1.ReasonNodeFailures, evicted[0])

	g.Eventually(func(g Gomega) {
		nodes := placedAsAssigned(g, ns, "Job", j.Name, labels, 4)
		racks := p.racksOf(nodes)
		g.Expect(racks).To(HaveLen(1), "pods on %v", nodes)
		g.Expect(racks[0]).NotTo(Equal(rack), "rack %s has 3 Ready nodes left, not 4", rack)
	}, nodeFailureTimeout, time.Second).Should(Succeed())
}

// kueueTASJob is a Kueue user's manifest (the shape of Kueue's
// site/static/examples/tas/sample-job-required.yaml): Kueue's queue label
// and Kueue's podset-required-topology annotation, nothing of Muster's.
const kueueTASJob = `
apiVersion: batch/v1
kind: Job
metadata:
  generateName: tas-sample-required-
  labels:
    kueue.x-k8s.io/queue-name: main
spec:
  parallelism: 8
  completions: 8
  completionMode: Indexed
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: "topology.kubernetes.io/rack"
    spec:
      containers:
      - name: dummy-job
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        args: ["pause"]
        resources:
          requests:
            cpu: "1"
            memory: "200Mi"
            nvidia.com/gpu: "4"
          limits:
            nvidia.com/gpu: "4"
      restartPolicy: Never
`

// TestTopologyKueueManifestRunsUnchanged: the Kueue user's TAS Job runs
// as it is: its 8 pods of 4 GPUs (a whole rack) are admitted into one rack.
func TestTopologyKueueManifestRunsUnchanged(t *testing.T) {
	g := NewWithT(t)
	p := topologyPool(t)
	ns := namespace(t)
	topologyQueue(t, ns, "128", nil)
	var j batchv1.Job
	g.Expect(yaml.UnmarshalStrict([]byte(kueueTASJob), &j)).To(Succeed())
	j.Namespace = ns
	createAll(t, &j)

	g.Eventually(func(g Gomega) {
		wl := workloadOf(g, ns, "Job", j.Name)
		g.Expect(wl.Spec.PodSets).To(HaveLen(1))
		g.Expect(wl.Spec.PodSets[0].TopologyRequest).NotTo(BeNil(), "the kueue.x-k8s.io/ annotation is read")
		g.Expect(wl.Spec.PodSets[0].TopologyRequest.Required).To(Equal(ptr.To(rackLabel)))
		nodes := placedAsAssigned(g, ns, "Job", j.Name, map[string]string{"job-name": j.Name}, 8)
		g.Expect(p.racksOf(nodes)).To(HaveLen(1), "pods on %v", nodes)
		g.Expect(sets(nodes)).To(HaveLen(4), "a rack's 4 nodes, 2 pods each: %v", nodes)
	}, timeout, time.Second).Should(Succeed())
}

// pool is the cluster's topology pool.
type pool struct {
	rackOf, blockOf map[string]string   // by node
	racks           map[string][]string // nodes by rack
}

// topologyPool returns the topology pool once all its nodes are Ready and
// no pod of an earlier test is left on them (namespaces are deleted in the
// background). It fails the test if the cluster has no 2x2x4 pool.
func topologyPool(t *testing.T) pool {
	t.Helper()
	g := NewWithT(t)
	var nodes corev1.NodeList
	g.Expect(c.List(context.Background(), &nodes, client.MatchingLabels{poolLabel: poolValue})).To(Succeed())
	p := pool{rackOf: map[string]string{}, blockOf: map[string]string{}, racks: map[string][]string{}}
	blocks := map[string]bool{}
	for _, n := range nodes.Items {
		p.rackOf[n.Name], p.blockOf[n.Name] = n.Labels[rackLabel], n.Labels[blockLabel]
		p.racks[n.Labels[rackLabel]] = append(p.racks[n.Labels[rackLabel]], n.Name)
		blocks[n.Labels[blockLabel]] = true
		g.Expect(n.Labels[hostLabel]).To(Equal(n.Name))
		gpus := n.Status.Allocatable[gpu]
		g.Expect(gpus.Value()).To(BeEquivalentTo(poolGPUsPerNode), "node %s GPUs", n.Name)
	}
	if len(nodes.Items) != poolBlocks*poolRacksPerBlock*poolNodesPerRack || len(blocks) != poolBlocks ||
		len(p.racks) != poolBlocks*poolRacksPerBlock {
		t.Fatalf("the cluster has %d topology pool nodes in %d racks and %d blocks, not 2x2x4: "+
			"bring it up with TOPOLOGY=2x2x4 hack/cluster.sh up (make test-e2e does)", len(nodes.Items), len(p.racks), len(blocks))
	}
	g.Eventually(func(g Gomega) {
		g.Expect(c.List(context.Background(), &nodes, client.MatchingLabels{poolLabel: poolValue})).To(Succeed())
		for _, n := range nodes.Items {
			cond := nodeCondition(n, corev1.NodeReady)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(corev1.ConditionTrue), "node %s Ready", n.Name)
		}
		var pods corev1.PodList
		g.Expect(c.List(context.Background(), &pods)).To(Succeed())
		for _, pod := range pods.Items {
			if _, in := p.rackOf[pod.Spec.NodeName]; in && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
				g.Expect(pod.Namespace+"/"+pod.Name).To(BeEmpty(), "left on node %s by an earlier test", pod.Spec.NodeName)
			}
		}
		// ...nor a placement: an admitted workload holds its nodes until
		// it is gone, its pods or not.
		var wls musterv1beta1.WorkloadList
		g.Expect(c.List(context.Background(), &wls)).To(Succeed())
		for _, wl := range wls.Items {
			if wl.Status.Admission == nil || meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadFinished) {
				continue
			}
			for _, psa := range wl.Status.Admission.PodSetAssignments {
				if psa.TopologyAssignment == nil {
					continue
				}
				for _, d := range psa.TopologyAssignment.Domains {
					for _, leaf := range d.Leaves {
						_, in := p.rackOf[leaf]
						g.Expect(in).To(BeFalse(), "workload %s/%s of an earlier test still holds node %s", wl.Namespace, wl.Name, leaf)
					}
				}
			}
		}
	}, timeout, time.Second).Should(Succeed())
	return p
}

func (p pool) rackNames() []string { return keys(p.racks) }

func (p pool) racksOf(nodes []string) []string {
	out := map[string]bool{}
	for _, n := range nodes {
		out[p.rackOf[n]] = true
	}
	return keys(out)
}

func (p pool) blocksOf(nodes []string) []string {
	out := map[string]bool{}
	for _, n := range nodes {
		out[p.blockOf[n]] = true
	}
	return keys(out)
}

// topologyQueue creates a Topology (block, rack, hostname), a flavor over
// the pool's nodes (and those of extra node labels) with that topology,
// tolerating the pool's taint, a ClusterQueue with gpus GPUs of it and
// LocalQueue "main" in ns.
func topologyQueue(t *testing.T, ns, gpus string, extra map[string]string) {
	t.Helper()
	topo := MakeTopology("topo-"+ns, blockLabel, rackLabel, hostLabel)
	rf := MakeResourceFlavor("pool-"+ns).TopologyName(topo.Name).NodeLabel(poolLabel, poolValue).
		Taint(corev1.Taint{Key: poolLabel, Value: poolValue, Effect: corev1.TaintEffectNoSchedule}).
		Toleration(corev1.Toleration{Key: poolLabel, Operator: corev1.TolerationOpEqual, Value: poolValue, Effect: corev1.TaintEffectNoSchedule})
	for k, v := range extra {
		rf.NodeLabel(k, v)
	}
	flavor := rf.Obj()
	cq := MakeClusterQueue("cq-" + ns).ResourceGroup(
		MakeFlavorQuotas(flavor.Name).Resource("cpu", "512").Resource("memory", "4Ti").Resource(gpu, gpus).Obj()).Obj()
	createAll(t, topo, flavor, cq, MakeLocalQueue("main", ns).ClusterQueue(cq.Name).Obj())
}

// topologyJob is a Job of pods pods of gpus GPUs (and 1 CPU) each in queue
// "main", with pod template annotations; its pods run until it is deleted.
func topologyJob(ns, name string, pods int32, gpus string, annotations map[string]string) *batchv1.Job {
	b := MakeJob(name, ns).Queue("main").Parallelism(pods).Request(gpu, gpus).Request("cpu", "1")
	for _, k := range keys(annotations) {
		b.PodAnnotation(k, annotations[k])
	}
	j := b.Obj()
	j.Spec.BackoffLimit = ptr.To[int32](0)
	return j
}

// workloadOf is the Workload of a job (its owner).
func workloadOf(g Gomega, ns, kind, owner string) *musterv1beta1.Workload {
	var wls musterv1beta1.WorkloadList
	g.Expect(c.List(context.Background(), &wls, client.InNamespace(ns))).To(Succeed())
	for i := range wls.Items {
		for _, o := range wls.Items[i].OwnerReferences {
			if o.Kind == kind && o.Name == owner {
				return &wls.Items[i]
			}
		}
	}
	g.Expect(owner).To(BeEmpty(), "no Workload of %s %s/%s yet", kind, ns, owner)
	return nil
}

// assignedNodes sums a workload's topologyAssignments over its pod sets:
// pods per node.
func assignedNodes(g Gomega, wl *musterv1beta1.Workload) map[string]int {
	g.Expect(wl.Status.Admission).NotTo(BeNil(), "workload %s admitted", wl.Name)
	out := map[string]int{}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		ta := psa.TopologyAssignment
		g.Expect(ta).NotTo(BeNil(), "pod set %s has a topologyAssignment", psa.Name)
		g.Expect(ta.Levels).NotTo(BeEmpty())
		g.Expect(ta.Levels[len(ta.Levels)-1]).To(Equal(hostLabel), "the leaves are nodes")
		for _, d := range ta.Domains {
			for i, leaf := range d.Leaves {
				n := ptr.Deref(d.Count, 0)
				if d.Counts != nil {
					n = d.Counts[i]
				}
				out[leaf] += int(n)
			}
		}
	}
	return out
}

// placedAsAssigned checks that a job's Workload is admitted with a
// topologyAssignment, that its want pods run exactly where it says (pods
// per node), each released from its gate with a hostname nodeSelector,
// and returns the pods' nodes, sorted.
func placedAsAssigned(g Gomega, ns, kind, owner string, labels map[string]string, want int) []string {
	return placedAs(g, workloadOf(g, ns, kind, owner), labels, want)
}

// placedAs is placedAsAssigned for a Workload in hand.
func placedAs(g Gomega, wl *musterv1beta1.Workload, labels map[string]string, want int) []string {
	ns := wl.Namespace
	g.Expect(meta.IsStatusConditionTrue(wl.Status.Conditions, musterv1beta1.WorkloadAdmitted)).To(BeTrue(), "workload %s admitted", wl.Name)
	assigned := assignedNodes(g, wl)
	var pods corev1.PodList
	g.Expect(c.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
	running := map[string]int{}
	var nodes []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s", p.Name)
		g.Expect(p.Spec.SchedulingGates).NotTo(ContainElement(corev1.PodSchedulingGate{Name: musterv1beta1.TopologySchedulingGate}), "pod %s ungated", p.Name)
		g.Expect(p.Spec.NodeSelector).To(HaveKeyWithValue(hostLabel, p.Spec.NodeName), "pod %s pinned to its assigned node", p.Name)
		running[p.Spec.NodeName]++
		nodes = append(nodes, p.Spec.NodeName)
	}
	g.Expect(nodes).To(HaveLen(want), "running pods of workload %s", wl.Name)
	g.Expect(running).To(Equal(assigned), "pods per node as in the topologyAssignment of %s", wl.Name)
	sort.Strings(nodes)
	return nodes
}

// setNodeReady sets a node's Ready condition, as its kubelet would.
func setNodeReady(t *testing.T, name string, ready bool) {
	t.Helper()
	g := NewWithT(t)
	status, reason := corev1.ConditionTrue, "KubeletReady"
	if !ready {
		status, reason = corev1.ConditionFalse, "KubeletNotReady"
	}
	g.Eventually(func(g Gomega) {
		var n corev1.Node
		g.Expect(c.Get(context.Background(), client.ObjectKey{Name: name}, &n)).To(Succeed())
		now := metav1.Now()
		cond := corev1.NodeCondition{Type: corev1.NodeReady, Status: status, Reason: reason,
			Message: "set by the e2e suite", LastHeartbeatTime: now, LastTransitionTime: now}
		found := false
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == corev1.NodeReady {
				n.Status.Conditions[i], found = cond, true
			}
		}
		if !found {
			n.Status.Conditions = append(n.Status.Conditions, cond)
		}
		g.Expect(c.Status().Update(context.Background(), &n)).To(Succeed())
	}, timeout, time.Second).Should(Succeed())
}

func nodeCondition(n corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sets(xs []string) []string {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return keys(m)
}

// TestTopologyPodLeftOnARepairedNodeStillCounts: a node of a placement
// stays NotReady past the grace period, so the placement is moved to
// another node of the rack; the node comes back with the job's pod still
// running on it (nothing evicted it: the node lifecycle controller is off
// here, as a kubelet may keep running through a missed heartbeat). That
// pod holds its node until it is gone: of the rack's four nodes, two are
// free (the job runs on the other two; its moved placement holds nothing
// while both its pods live), so a job of three whole nodes waits, where
// counting the left pod nowhere would promise its node a second time.
func TestTopologyPodLeftOnARepairedNodeStillCounts(t *testing.T) {
	g := NewWithT(t)
	p := topologyPool(t)
	ns := namespace(t)
	rack := p.rackNames()[0]
	topologyQueue(t, ns, "128", map[string]string{rackLabel: rack})
	first := topologyJob(ns, "first", 2, "8", map[string]string{annRequired: rackLabel})
	first.Spec.BackoffLimit = ptr.To[int32](6) // the loss is tolerated: repaired, not requeued
	createAll(t, first)
	labels := map[string]string{"job-name": first.Name}
	var before []string
	g.Eventually(func(g Gomega) {
		before = placedAsAssigned(g, ns, "Job", first.Name, labels, 2)
	}, timeout, time.Second).Should(Succeed())
	failed := before[0]

	setNodeReady(t, failed, false)
	t.Cleanup(func() { setNodeReady(t, failed, true) })
	g.Eventually(func(g Gomega) {
		g.Expect(assignedNodes(g, workloadOf(g, ns, "Job", first.Name))).NotTo(HaveKey(failed))
	}, nodeFailureTimeout, time.Second).Should(Succeed(), "the placement moved off %s", failed)
	setNodeReady(t, failed, true)
	_, _, _, nodes := podsOf(g, ns, first.Name)
	g.Expect(nodes).To(ContainElement(failed), "the job's pod still runs on the node it was moved off")

	t.Logf("first placed on %v, its pods on %v", assignedNodes(g, workloadOf(g, ns, "Job", first.Name)), nodes)
	second := topologyJob(ns, "second", 3, "8", map[string]string{annRequired: rackLabel})
	createAll(t, second)
	waits := func(g Gomega) {
		wl := workloadOf(g, ns, "Job", second.Name)
		if wl.Status.Admission != nil {
			g.Expect(wl.Status.Admission).To(BeNil(), "admitted onto %v", assignedNodes(g, wl))
		}
		cond := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Message).To(ContainSubstring(rackLabel))
	}
	g.Eventually(waits, timeout, time.Second).Should(Succeed())
	g.Consistently(waits, 5*time.Second, time.Second).Should(Succeed())
	t.Logf("%s waits: %s", second.Name, meta.FindStatusCondition(workloadOf(g, ns, "Job", second.Name).Status.Conditions, musterv1beta1.WorkloadQuotaReserved).Message)
}

// waitsSaying expects a Job's Workload pending (not admitted, QuotaReserved
// False) with a reason that says each of the parts.
func waitsSaying(g Gomega, ns, job string, parts ...string) {
	wl := workloadOf(g, ns, "Job", job)
	cond := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)
	g.Expect(cond).NotTo(BeNil())
	g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	for _, p := range parts {
		g.Expect(cond.Message).To(ContainSubstring(p), "the pending reason: %q", cond.Message)
	}
	g.Expect(wl.Status.Admission).To(BeNil())
}
