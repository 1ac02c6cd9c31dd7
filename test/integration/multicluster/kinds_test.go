package multicluster

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs"
	"github.com/musterhq/muster/internal/workload"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// A kind other than batch/v1 Job goes through the same generic dispatch:
// the webhook hands it over with the managedBy value its operator accepts
// (Muster's for a JobSet; Kueue's, under runPolicy for a PyTorchJob, for
// KubeRay's), the worker gets the copy without it and its Muster starts
// it, and what the worker's operator writes in its status comes back.
func TestEveryKindIsDispatched(t *testing.T) {
	cases := []struct {
		name     string
		obj      func(ns string) client.Object
		gvk      schema.GroupVersionKind
		path     []string
		value    string
		suspend  []string
		workload string
		status   map[string]any
	}{
		{
			name: "JobSet", gvk: gvkOf(t, "JobSet"),
			obj: func(ns string) client.Object {
				return MakeJobSet("js", ns).Queue("main").ReplicatedJob("workers", 2, 2, gpu, "1").Obj()
			},
			path: []string{"spec", "managedBy"}, value: musterv1beta1.MultiClusterManagedBy, suspend: []string{"spec", "suspend"},
			workload: "JobSet",
			status:   map[string]any{"restarts": int64(1)},
		},
		{
			name: "PyTorchJob", gvk: gvkOf(t, "PyTorchJob"),
			obj: func(ns string) client.Object {
				return MakePyTorchJob("pt", ns).Queue("main").Replicas("Worker", 1).Request("Master", gpu, "1").Request("Worker", gpu, "1").Obj()
			},
			path: []string{"spec", "runPolicy", "managedBy"}, value: musterv1beta1.KueueMultiKueueManagedBy, suspend: []string{"spec", "runPolicy", "suspend"},
			workload: "PyTorchJob",
			status:   map[string]any{"conditions": []any{}, "replicaStatuses": map[string]any{"Master": map[string]any{"active": int64(1)}}},
		},
		{
			name: "RayCluster", gvk: gvkOf(t, "RayCluster"),
			obj: func(ns string) client.Object {
				return MakeRayCluster("rc", ns).Queue("main").HeadRequest(gpu, "1").WorkerGroup("w", 2, gpu, "1").Obj()
			},
			path: []string{"spec", "managedBy"}, value: musterv1beta1.KueueMultiKueueManagedBy, suspend: []string{"spec", "suspend"},
			workload: "RayCluster",
			status:   map[string]any{"state": "ready", "readyWorkerReplicas": int64(2)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueues(t, "8", "8", "0")
			obj := tc.obj(q.ns)
			manager.CreateAll(t, obj)
			var mine *unstructured.Unstructured
			eventually(t, framework.Timeout, func(g Gomega) {
				mine = get(g, manager.Client, tc.gvk, obj)
				v, _, _ := unstructured.NestedString(mine.Object, tc.path...)
				g.Expect(v).To(Equal(tc.value), "not handed to the dispatch")
				wl := workloadOf(g, tc.workload, mine)
				g.Expect(wl.Status.ClusterName).To(Equal("worker1"))
				g.Expect(workload.IsAdmitted(wl)).To(BeTrue())
				theirs := get(g, worker1.Client, tc.gvk, obj)
				_, has, _ := unstructured.NestedFieldNoCopy(theirs.Object, tc.path...)
				g.Expect(has).To(BeFalse(), "the worker's copy keeps managedBy: its operator would not run it")
				suspended, _, _ := unstructured.NestedBool(theirs.Object, tc.suspend...)
				g.Expect(suspended).To(BeFalse(), "the worker's Muster did not start it")
			})
			eventually(t, framework.Timeout, func(g Gomega) {
				theirs := get(g, worker1.Client, tc.gvk, obj)
				theirs.Object["status"] = tc.status
				g.Expect(worker1.Client.Status().Update(context.Background(), theirs)).To(Succeed())
			})
			eventually(t, framework.Timeout, func(g Gomega) {
				mine := get(g, manager.Client, tc.gvk, obj)
				for k, v := range tc.status {
					g.Expect(mine.Object["status"]).To(HaveKeyWithValue(k, v), "status not mirrored")
				}
			})
		})
	}
}

func gvkOf(t *testing.T, kind string) schema.GroupVersionKind {
	t.Helper()
	for _, i := range jobs.Registry().Integrations() {
		if i.GVK.Kind == kind {
			return i.GVK
		}
	}
	t.Fatalf("no registered kind %s", kind)
	return schema.GroupVersionKind{}
}

// get reads a job of any kind unstructured.
func get(g Gomega, c client.Client, gvk schema.GroupVersionKind, obj client.Object) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(obj), u)).To(Succeed())
	return u
}

// workloadOf is the manager's Workload of a job of the kind.
func workloadOf(g Gomega, kind string, job *unstructured.Unstructured) *musterv1beta1.Workload {
	var wl musterv1beta1.Workload
	key := client.ObjectKey{Namespace: job.GetNamespace(), Name: jobframework.WorkloadName(kind, job.GetName(), job.GetUID())}
	g.Expect(manager.Client.Get(context.Background(), key, &wl)).To(Succeed())
	return &wl
}
