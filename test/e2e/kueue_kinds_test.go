//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"
	"sigs.k8s.io/yaml"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
)

// kueueLWS has the shape of Kueue's serving example
// (site/static/examples/serving-workloads/sample-leaderworkerset.yaml):
// Kueue's queue label on the set, a leader and a worker template, nothing
// of Muster's.
const kueueLWS = `
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: nginx-leaderworkerset
  labels:
    app: nginx
    kueue.x-k8s.io/queue-name: user-queue
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 3
    leaderTemplate:
      spec:
        containers:
        - name: nginx-leader
          image: registry.k8s.io/nginx-slim:0.27
          resources:
            requests:
              cpu: "100m"
          ports:
          - containerPort: 80
    workerTemplate:
      spec:
        containers:
        - name: nginx-worker
          image: nginx:1.14.2
          resources:
            requests:
              cpu: "200m"
          ports:
          - containerPort: 80
`

// kueueAppWrapper has the shape of Kueue's AppWrapper example
// (site/static/examples/jobs/appwrapper-pytorch-sample.yaml): a PyTorchJob
// wrapped with no pod sets declared (the AppWrapper library infers them).
const kueueAppWrapper = `
apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata:
  name: sample-pytorch-job
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  components:
  - template:
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      metadata:
        name: pytorch-simple
      spec:
        pytorchReplicaSpecs:
          Master:
            replicas: 1
            restartPolicy: OnFailure
            template:
              spec:
                containers:
                - name: pytorch
                  image: docker.io/kubeflowkatib/pytorch-mnist-cpu:v1beta1-fc858d1
                  command: ["python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"]
                  resources:
                    requests:
                      cpu: 1
          Worker:
            replicas: 1
            restartPolicy: OnFailure
            template:
              spec:
                containers:
                - name: pytorch
                  image: docker.io/kubeflowkatib/pytorch-mnist-cpu:v1beta1-fc858d1
                  command: ["python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"]
                  resources:
                    requests:
                      cpu: 1
`

// manifest is a YAML manifest as kubectl creates it, in namespace ns.
func manifest(g *WithT, text, ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal([]byte(text), &u.Object)).To(Succeed())
	u.SetNamespace(ns)
	return u
}

// userQueue is Kueue's examples' LocalQueue name, on the namespace's
// ClusterQueue.
func userQueue(t *testing.T, ns string) {
	createAll(t, MakeLocalQueue("user-queue", ns).ClusterQueue(queues(t, ns, "8", "8")).Obj())
}

// TestKueueLeaderWorkerSetRunsUnchanged: a Kueue user's LeaderWorkerSet
// runs as written: each of its two groups is a Workload admitted whole,
// and the LeaderWorkerSet controller's six pods run.
func TestKueueLeaderWorkerSetRunsUnchanged(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	userQueue(t, ns)
	// As kubectl sends it: the fields it leaves out are the CRD's defaults
	// (a typed client would send startupPolicy: "").
	lws := manifest(g, kueueLWS, ns)
	createAll(t, lws)
	g.Eventually(func(g Gomega) {
		for _, group := range []string{"0", "1"} {
			var wl musterv1beta1.Workload
			g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "leaderworkerset-" + lws.GetName() + "-" + group}, &wl)).To(Succeed())
			g.Expect(workload.IsAdmitted(&wl)).To(BeTrue(), "group %s", group)
		}
		running, _ := countPods(g, ns, map[string]string{lwsv1.SetNameLabelKey: lws.GetName()})
		g.Expect(running).To(Equal(6))
	}, timeout, time.Second).Should(Succeed())
}

// TestKueueAppWrapperRunsUnchanged: a Kueue user's AppWrapper of a
// PyTorchJob runs as written: one Workload, the Master's and the Worker's
// pod sets inferred, the PyTorchJob the AppWrapper controller creates is
// its part and the training operator's two pods run.
func TestKueueAppWrapperRunsUnchanged(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	userQueue(t, ns)
	createAll(t, manifest(g, kueueAppWrapper, ns))
	g.Eventually(func(g Gomega) {
		var wls musterv1beta1.WorkloadList
		g.Expect(c.List(context.Background(), &wls, client.InNamespace(ns))).To(Succeed())
		g.Expect(wls.Items).To(HaveLen(1), "the AppWrapper's only, none for its PyTorchJob")
		g.Expect(wls.Items[0].Spec.PodSets).To(HaveLen(2))
		g.Expect(workload.IsAdmitted(&wls.Items[0])).To(BeTrue())
		running, _ := countPods(g, ns, map[string]string{"training.kubeflow.org/job-name": "pytorch-simple"})
		g.Expect(running).To(Equal(2))
	}, timeout, time.Second).Should(Succeed())
}
