package scheduling

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/conflict"
)

// +kubebuilder:rbac:groups=muster.dev,resources=topologies,verbs=get;list;watch
// +kubebuilder:rbac:groups=muster.dev,resources=topologies/status,verbs=get;update;patch

// topologyStatusRefresh is how often a Topology's node and domain counts
// are brought up to date; they move with node events, which are too many
// to write on.
const topologyStatusRefresh = 30 * time.Second

// TopologyReconciler feeds Topology objects to the core, which builds each
// one's tree from the nodes it already knows, and reports the tree's size.
type TopologyReconciler struct {
	client client.Client
	state  *State
}

// Reconcile applies one Topology.
func (r *TopologyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	return conflict.Requeue(ctx, res, err)
}

func (r *TopologyReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.state.WaitSynced(ctx); err != nil {
		return ctrl.Result{}, err
	}
	var t musterv1beta1.Topology
	if err := r.client.Get(ctx, req.NamespacedName, &t); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		r.state.Cache.DeleteTopology(req.Name)
		log.FromContext(ctx).Info("Removed topology", "topology", klog.KRef("", req.Name))
		r.state.refreshClusterQueues(r.state.Cache.QueuesUsingTopology(req.Name)...)
		return ctrl.Result{}, nil
	}
	known := r.state.Cache.HasTopology(t.Name)
	applyErr := r.state.applyTopology(&t)
	if applyErr == nil {
		r.state.capacityFreed()
	}
	if !known {
		queues := r.state.Cache.QueuesUsingTopology(t.Name)
		r.state.Queues.Unpark(queues...)
		r.state.refreshClusterQueues(queues...)
	}
	return ctrl.Result{RequeueAfter: topologyStatusRefresh}, r.updateStatus(ctx, &t, applyErr)
}

// updateStatus writes the node and domain counts and the Active condition,
// only when they changed.
func (r *TopologyReconciler) updateStatus(ctx context.Context, t *musterv1beta1.Topology, applyErr error) error {
	st := r.state.Cache.TopologyStatus(t.Name)
	want := t.Status.DeepCopy()
	want.Nodes = int32(st.Nodes)
	want.Domains = nil
	for _, d := range st.Domains {
		want.Domains = append(want.Domains, int32(d))
	}
	cond := metav1.Condition{Type: musterv1beta1.ClusterQueueActive, Status: metav1.ConditionTrue, Reason: musterv1beta1.ReasonReady,
		Message: fmt.Sprintf("%d nodes carry every level label", st.Nodes), ObservedGeneration: t.Generation}
	if applyErr != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, musterv1beta1.ReasonInvalidTopology, applyErr.Error()
	}
	meta.SetStatusCondition(&want.Conditions, cond)
	if equality.Semantic.DeepEqual(&t.Status, want) {
		return nil
	}
	patch := client.MergeFrom(t.DeepCopy())
	t.Status = *want
	return r.client.Status().Patch(ctx, t, patch)
}

// SetupWithManager registers the reconciler.
func (r *TopologyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&musterv1beta1.Topology{}).
		WatchesRawSource(r.state.resyncSource("topology")).
		WithOptions(everyReplica(controller.Options{})).Complete(r)
}

// applyTopology gives the core a topology's levels.
func (s *State) applyTopology(t *musterv1beta1.Topology) error {
	levels := make([]string, 0, len(t.Spec.Levels))
	for _, l := range t.Spec.Levels {
		levels = append(levels, l.NodeLabel)
	}
	return s.Cache.UpsertTopology(t.Name, levels)
}
