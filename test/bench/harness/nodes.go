package harness

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var nodes = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// createTopology creates the topology's Nodes, Ready with their
// allocatable and untainted, then the target's Topology. No kubelet runs:
// the envtest control plane has no node lifecycle controller either, so
// nothing marks the nodes NotReady or taints them again during the run.
func createTopology(ctx context.Context, api *APIServer, t Target, topo *TopologyPlan, withTopology bool) error {
	err := forEach(len(topo.Nodes), 16, func(i int) error {
		return createNode(ctx, api, topo.Nodes[i])
	})
	if err != nil || !withTopology {
		return err
	}
	return create(ctx, api, t.Resource("Topology"), t.Topology(topo))
}

// createNode creates the node, writes its status, then removes the
// node.kubernetes.io/not-ready:NoSchedule taint that the API server's
// TaintNodesByCondition admission puts on every new node (in a cluster the
// node lifecycle controller removes it once the node is Ready; both
// targets exclude tainted nodes).
func createNode(ctx context.Context, api *APIServer, n NodePlan) error {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Node")
	u.SetName(n.Name)
	u.SetLabels(n.Labels)
	if err := create(ctx, api, nodes, u); err != nil {
		return err
	}
	status, err := json.Marshal(map[string]any{"status": nodeStatus(n)})
	if err != nil {
		return err
	}
	if err := patchNode(ctx, api, n.Name, status, "status"); err != nil {
		return err
	}
	return patchNode(ctx, api, n.Name, []byte(`{"spec":{"taints":null}}`))
}

func patchNode(ctx context.Context, api *APIServer, name string, patch []byte, subresource ...string) error {
	_, err := api.Dynamic.Resource(nodes).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, subresource...)
	if err != nil {
		return fmt.Errorf("patching node %s: %w", name, err)
	}
	return nil
}

func nodeStatus(n NodePlan) corev1.NodeStatus {
	now := metav1.Now()
	return corev1.NodeStatus{
		Capacity: n.Allocatable, Allocatable: n.Allocatable,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "created Ready by the benchmark", LastHeartbeatTime: now, LastTransitionTime: now,
		}},
	}
}
